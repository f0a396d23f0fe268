/** The timers a host schedules with (the global ones by default; tests and demos inject their own). */
export interface RuntimeTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

// Looked up at each call, so vitest fake timers installed after construction still drive the host.
export const GLOBAL_TIMERS: RuntimeTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The longest delay `setTimeout` keeps; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A timeout of {@link setLongTimeout} or {@link setSoon}: cancel it with {@link clearLongTimeout}. */
export interface LongTimeout {
  handle: unknown;
  cancelled: boolean;
}

/** `timers.setTimeout` for any delay: one longer than a timer holds is waited in steps. */
export function setLongTimeout(timers: RuntimeTimers, fn: () => void, ms: number): LongTimeout {
  const timeout: LongTimeout = { handle: undefined, cancelled: false };
  const arm = (left: number) => {
    timeout.handle = timers.setTimeout(
      () => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()),
      Math.min(left, MAX_TIMER_MS),
    );
  };
  arm(Math.max(0, ms));
  return timeout;
}

/** Runs `fn` before any timer: due work a caller under fake timers must see without advancing again. */
export function setSoon(fn: () => void): LongTimeout {
  const timeout: LongTimeout = { handle: undefined, cancelled: false };
  queueMicrotask(() => {
    if (!timeout.cancelled) fn();
  });
  return timeout;
}

export function clearLongTimeout(timers: RuntimeTimers, timeout: unknown): void {
  if (typeof timeout !== "object" || timeout === null || !("cancelled" in timeout)) return;
  const t = timeout as LongTimeout;
  t.cancelled = true;
  if (t.handle !== undefined) timers.clearTimeout(t.handle);
}
