import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Resolves `true` once, for `turns` event-loop turns, nothing was `busy()` and `progress()` stayed:
 * what is open waits only for a timer. `false` once `watch.stopped`. Works under fake timers.
 */
export async function untilStalled(
  o: { busy: () => boolean; progress: () => unknown; watch: { stopped: boolean } },
  turns = 3,
): Promise<boolean> {
  let quiet = 0;
  let last = o.progress();
  while (!o.watch.stopped) {
    await nextTurn();
    const now = o.progress();
    quiet = !o.busy() && now === last ? quiet + 1 : 0;
    last = now;
    if (quiet >= turns) return true;
  }
  return false;
}
