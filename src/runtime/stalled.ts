import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Resolves `true` once, for `turns` event-loop turns in a row, nothing the runtime tracks is under way
 * (`busy()` false: no snapshot write, gateway call or Discord call) and nothing happened
 * (`progress()` unchanged): the work still open then waits only for a timer, such as a post queued
 * behind a rate limit. Resolves `false` as soon as `watch.stopped` is set.
 *
 * It turns with node:timers/promises, which fake timers leave real, so it works under them too.
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
