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
