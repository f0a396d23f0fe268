import { SimulatedClock } from "xstate";
import type { Clock } from "./discordFakes.js";

/**
 * A test's wall clock that XState's delays run on: pass `timers` as the actor's `clock`. Fakes stamp
 * their outputs with `now`; setting `now` moves time forward and fires, in order, every `after` delay
 * due by then (as the runtime's clock would). `nextDue()` is when the earliest pending delay is due.
 */
export function simulatedTime(t0: number): Clock & { timers: SimulatedClock; nextDue(): number } {
  const timers = new SimulatedClock();
  timers.set(t0);
  const dueAt = new Map<number, number>();
  const setTimeout = timers.setTimeout.bind(timers);
  const clearTimeout = timers.clearTimeout.bind(timers);
  timers.setTimeout = (fn, ms) => {
    const id = setTimeout((...args: unknown[]) => {
      dueAt.delete(id);
      fn(...args);
    }, ms);
    dueAt.set(id, timers.now() + ms);
    return id;
  };
  timers.clearTimeout = (id) => {
    dueAt.delete(id);
    clearTimeout(id);
  };
  return {
    timers,
    get now() {
      return timers.now();
    },
    set now(at: number) {
      timers.set(at);
    },
    nextDue: () => (dueAt.size === 0 ? Number.NaN : Math.min(...dueAt.values())),
  };
}
