import type { RuntimeTimers } from "../../runtime/index.js";

/** Where an accelerated clock stands, enough for another process to share it. */
export interface ClockOrigin {
  /** Demo time at the origin (ms since the epoch). */
  demoStart: number;
  /** Real time at the origin (ms since the epoch). */
  realStart: number;
  speed: number;
}

/**
 * Demo time that runs `speed` times faster than real time: `now()` for the runtime and the emulator,
 * and timers whose delays are demo milliseconds. Two processes built from one origin agree on the
 * time, which is what lets the demo kill one gateway and resume its timers in another.
 */
export class AcceleratedClock {
  readonly timers: RuntimeTimers;

  constructor(
    public origin: ClockOrigin,
    private readonly realNow: () => number = Date.now,
  ) {
    assertSpeed(origin.speed);
    this.timers = {
      setTimeout: (fn, ms) => setTimeout(fn, ms / this.origin.speed),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    };
  }

  /**
   * A clock at real speed, `lead` ms behind real time (so that a demo of that length ends about now);
   * `accelerate` switches it to its demo speed.
   */
  static startingNow(lead = 0, realNow: () => number = Date.now): AcceleratedClock {
    const real = realNow();
    return new AcceleratedClock({ demoStart: real - lead, realStart: real, speed: 1 }, realNow);
  }

  /**
   * From now on, time runs `speed` times faster; demo time goes on from where it stands, so it never
   * goes back (the emulator's message ids must keep increasing). Timers already set keep their delay.
   */
  accelerate(speed: number): void {
    assertSpeed(speed);
    this.origin = { demoStart: this.now(), realStart: this.realNow(), speed };
  }

  readonly now = (): number =>
    Math.floor(this.origin.demoStart + (this.realNow() - this.origin.realStart) * this.origin.speed);

  /** Demo milliseconds since the origin. */
  elapsed(): number {
    return this.now() - this.origin.demoStart;
  }

  /** Resolves after `ms` of demo time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timers.setTimeout(resolve, ms));
  }

  /** Resolves at demo time `at` (at once when it has passed). */
  sleepUntil(at: number): Promise<void> {
    return this.sleep(Math.max(0, at - this.now()));
  }
}

function assertSpeed(speed: number): void {
  if (!(Number.isFinite(speed) && speed > 0)) {
    throw new RangeError(`speed must be a number above 0, got ${String(speed)}`);
  }
}
