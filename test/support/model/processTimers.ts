import type { RuntimeTimers } from "../../../src/index.js";
import type { VirtualClock } from "../../../src/testing/index.js";
import { enter, type Generation } from "./generations.js";

/**
 * The timers of the simulated processes, all on one virtual clock: each fires inside its process, and
 * a dead process's never fire. `dropDead()` cancels those of the dead, so that `clock.nextDue()` is
 * when a live process's timer is due.
 */
export class ProcessTimers {
  private readonly handles = new Map<Generation, Set<unknown>>();

  constructor(private readonly clock: VirtualClock) {}

  /** The `timers` option of one process's runtime. */
  of(generation: Generation): RuntimeTimers {
    const mine = this.handles.get(generation) ?? new Set<unknown>();
    this.handles.set(generation, mine);
    return {
      setTimeout: (fn, ms) => {
        const handle = this.clock.setTimeout(() => {
          mine.delete(handle);
          if (!generation.dead) enter(generation, fn);
        }, ms);
        mine.add(handle);
        return handle;
      },
      clearTimeout: (handle) => {
        mine.delete(handle);
        this.clock.clearTimeout(handle);
      },
    };
  }

  /** Cancels every timer of a dead process. */
  dropDead(): void {
    for (const [generation, mine] of this.handles) {
      if (!generation.dead) continue;
      for (const handle of mine) this.clock.clearTimeout(handle);
      mine.clear();
    }
  }
}
