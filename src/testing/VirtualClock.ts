import { GLOBAL_TIMERS, type RuntimeTimers } from "../durable/timers.js";

/** Real time, which a running {@link VirtualClock} follows: the global clock and timers unless faked. */
export interface RealTime {
  now(): number;
  timers: RuntimeTimers;
}

/** A running clock read `at` (epoch ms) at real time `realAt` and runs `speed` times as fast; same pace, same time. */
export interface ClockPace {
  at: number;
  realAt: number;
  speed: number;
}

interface Timer {
  at: number;
  fn: () => void;
}

/** The global clock and timers, looked up at each call, so vitest fake timers installed later drive them. */
export const REAL_TIME: RealTime = { now: () => Date.now(), timers: GLOBAL_TIMERS };

/**
 * A clock and timers (the runtime's `now` and `timers`, or XState's `clock`) on virtual time, moved by
 * `advance` or `moveTo` or, after `run`, following real time. Timers fire in due order, ties as set.
 */
export class VirtualClock implements RuntimeTimers {
  private time: number;
  private readonly queue = new Map<number, Timer>();
  private nextHandle = 1;
  private advancing = false;
  private firing = false;
  private running: { pace: ClockPace; real: RealTime; handle?: unknown } | undefined;

  constructor(start: number) {
    assertTime("VirtualClock", start);
    this.time = start;
  }

  readonly now = (): number => {
    const r = this.running;
    if (r === undefined) return this.time;
    return Math.floor(r.pace.at + (r.real.now() - r.pace.realAt) * r.pace.speed);
  };

  setTimeout(fn: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    const at = this.now() + Math.max(0, ms);
    this.queue.set(handle, { at, fn });
    this.arm();
    return handle;
  }

  clearTimeout(handle: unknown): void {
    // A running clock's real timer stays armed: when it fires it finds nothing due and re-arms.
    this.queue.delete(handle as number);
  }

  /** Timers set and not fired yet. */
  get pending(): number {
    return this.queue.size;
  }

  /** When the earliest pending timer is due; undefined when none is. */
  nextDue(): number | undefined {
    const times = [...this.queue.values()].map((t) => t.at);
    return times.length === 0 ? undefined : Math.min(...times);
  }

  /**
   * Sets the time (never back) and synchronously fires every timer due by then, each seeing the new time;
   * returns how many fired. From inside a timer it only moves the time (the firing under way goes on).
   */
  moveTo(time: number): number {
    assertTime("moveTo", time);
    this.assertStopped("moveTo");
    if (time < this.time)
      throw new RangeError(`moveTo: the clock cannot go back from ${this.time} to ${time}`);
    this.time = time;
    if (this.firing) return 0;
    this.firing = true;
    let fired = 0;
    try {
      for (let next = this.takeDue(this.time); next !== undefined; next = this.takeDue(this.time)) {
        fired += 1;
        next.fn();
      }
    } finally {
      this.firing = false;
    }
    return fired;
  }

  /**
   * Moves the clock `ms` forward, firing each timer due on the way at its due time, and awaiting
   * `settle` before each and at the end, so a timer's consequences (and the timers they set) land first.
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
      throw new TypeError(`advance: ms must be a finite number of milliseconds ≥ 0, got ${String(ms)}`);
    }
    this.assertStopped("advance");
    if (this.advancing)
      throw new Error("advance: the clock is already advancing; await the earlier call first");
    this.advancing = true;
    try {
      const end = this.time + ms;
      for (;;) {
        await settle();
        const next = this.takeDue(end);
        if (next === undefined) break;
        this.time = Math.max(this.time, next.at);
        next.fn();
      }
      this.time = Math.max(this.time, end);
    } finally {
      this.advancing = false;
    }
  }

  /** Time runs by itself at `pace` (or `speed` times real time from now) until `stop()`; again: a new pace. */
  run(pace: ClockPace | number, real: RealTime = REAL_TIME): void {
    const p = typeof pace === "number" ? { at: this.now(), realAt: real.now(), speed: pace } : { ...pace };
    if (!(Number.isFinite(p.speed) && p.speed > 0)) {
      throw new RangeError(`speed must be a number above 0, got ${String(p.speed)}`);
    }
    assertTime("run", p.at);
    assertTime("run", p.realAt);
    this.disarm();
    this.running = { pace: p, real };
    this.arm();
  }

  /** The pace time runs at, while it runs by itself. */
  get pace(): ClockPace | undefined {
    return this.running === undefined ? undefined : { ...this.running.pace };
  }

  /** Stops time where it stands. */
  stop(): void {
    if (this.running === undefined) return;
    const time = this.now();
    this.disarm();
    this.running = undefined;
    this.time = time;
  }

  /** Takes the earliest timer due by `by` (ties: the first set) out of the queue. */
  private takeDue(by: number): Timer | undefined {
    let best: [number, Timer] | undefined;
    for (const entry of this.queue)
      if (entry[1].at <= by && !(best && best[1].at <= entry[1].at)) best = entry;
    if (best !== undefined) this.queue.delete(best[0]);
    return best?.[1];
  }

  /** Sets a running clock's real timer for its earliest timer. */
  private arm(): void {
    const r = this.running;
    if (r === undefined) return;
    this.disarm();
    const at = this.nextDue();
    if (at === undefined) return;
    // Rounded up: when it fires, the virtual time has reached `at`.
    const delay = Math.max(0, Math.ceil((at - this.now()) / r.pace.speed));
    r.handle = r.real.timers.setTimeout(() => {
      r.handle = undefined;
      this.fireRunning();
    }, delay);
  }

  /** Fires one due timer and re-arms: timers due together fire in turns, as real timers do. */
  private fireRunning(): void {
    const next = this.takeDue(this.now());
    try {
      next?.fn();
    } finally {
      this.arm();
    }
  }

  private disarm(): void {
    const r = this.running;
    if (r?.handle === undefined) return;
    r.real.timers.clearTimeout(r.handle);
    r.handle = undefined;
  }

  private assertStopped(call: string): void {
    if (this.running !== undefined) {
      throw new Error(`${call}: the clock runs by itself; stop() it first`);
    }
  }
}

function assertTime(call: string, time: number): void {
  if (typeof time !== "number" || !Number.isFinite(time)) {
    throw new TypeError(`${call}: a time must be a finite number of epoch milliseconds, got ${String(time)}`);
  }
}
