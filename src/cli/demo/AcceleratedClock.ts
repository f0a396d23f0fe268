import { type ClockPace, REAL_TIME, type RealTime, VirtualClock } from "../../testing/VirtualClock.js";

/**
 * Demo time: a virtual clock that runs `speed` times faster than real time, for the runtime (`now`,
 * `timers`) and the emulator. Two processes built from one origin agree on the time, which is what
 * lets the demo kill one gateway and resume its timers in another.
 */
export class AcceleratedClock extends VirtualClock {
  constructor(
    origin: ClockPace,
    private readonly real: RealTime = REAL_TIME,
  ) {
    super(origin.at);
    this.run(origin, real);
  }

  /**
   * A clock at real speed, `lead` ms behind real time (so that a demo of that length ends about now);
   * `accelerate` switches it to its demo speed.
   */
  static startingNow(lead = 0, real: RealTime = REAL_TIME): AcceleratedClock {
    const realAt = real.now();
    return new AcceleratedClock({ at: realAt - lead, realAt, speed: 1 }, real);
  }

  /** Where the clock stands since its last change of speed, enough for another process to share it. */
  get origin(): ClockPace {
    return this.pace as ClockPace;
  }

  /**
   * From now on, time runs `speed` times faster; demo time goes on from where it stands, so it never
   * goes back (the emulator's message ids must keep increasing).
   */
  accelerate(speed: number): void {
    this.run(speed, this.real);
  }

  /** Demo milliseconds since the origin. */
  elapsed(): number {
    return this.now() - this.origin.at;
  }

  /** Resolves after `ms` of demo time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Resolves at demo time `at` (at once when it has passed). */
  sleepUntil(at: number): Promise<void> {
    return this.sleep(Math.max(0, at - this.now()));
  }
}
