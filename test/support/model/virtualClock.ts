import type { RuntimeTimers } from "../../../src/index.js";
import { enter, type Generation } from "./generations.js";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  generation: Generation;
}

/**
 * The simulated wall clock and the timers of every simulated process, driven by the test: nothing
 * moves unless `fireDue()` or `moveTo()` is called. A dead process's timers never fire.
 */
export class VirtualClock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(public now: number) {}

  /** The `timers` option of one process's runtime. */
  timersFor(generation: Generation): RuntimeTimers {
    return {
      setTimeout: (fn, ms) => {
        const timer: Timer = { at: this.now + Math.max(0, ms), seq: this.seq++, fn, generation };
        this.timers.push(timer);
        return timer;
      },
      clearTimeout: (handle) => {
        this.timers = this.timers.filter((t) => t !== handle);
      },
    };
  }

  /** The earliest time a live process's timer is due, if any. */
  nextDue(): number | undefined {
    this.timers = this.timers.filter((t) => !t.generation.dead);
    return this.timers.reduce<number | undefined>(
      (min, t) => (min === undefined || t.at < min ? t.at : min),
      undefined,
    );
  }

  /** Runs every timer due by now, in due order, each in its process; whether any ran. */
  fireDue(): boolean {
    let fired = false;
    for (;;) {
      const due = this.timers
        .filter((t) => t.at <= this.now && !t.generation.dead)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) return fired;
      this.timers = this.timers.filter((t) => t !== due);
      fired = true;
      enter(due.generation, due.fn);
    }
  }

  /** Sets the clock (never backwards). */
  moveTo(time: number): void {
    if (time < this.now) throw new Error(`the virtual clock cannot go back from ${this.now} to ${time}`);
    this.now = time;
  }
}
