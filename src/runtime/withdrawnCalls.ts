import { ActorTakenOverError, type SnapshotStore } from "../persistence/index.js";
import type { ThreadState } from "./ThreadState.js";

/**
 * Withdraws, before any actor resumes, the actors of calls stop() rejected while none of their writes
 * had landed, yet stored all the same (a write can land with its reply lost): the caller was told the
 * call failed and may call again, so these are archived as failed, never run. One another process took
 * over meanwhile is its own (and is said). A store that cannot be read or written rejects, and the ids
 * stay for the next start.
 */
export async function withdrawCalls(
  threads: ThreadState,
  store: SnapshotStore,
  now: () => number,
  warn: (message: string) => void,
): Promise<void> {
  const ids = threads.withdrawnCalls();
  for (const id of ids) {
    const record = await store.get(id);
    if (record?.status !== "active") continue;
    try {
      await store.put([{ ...record, status: "error", updatedAt: now() }]);
      warn(`actor ${id}: its call was rejected as the runtime stopped; withdrawn, not carried out`);
    } catch (error) {
      if (!(error instanceof ActorTakenOverError)) throw error;
      warn(`actor ${id}: its call was rejected as the runtime stopped, yet another process runs it`);
    }
  }
  threads.keepWithdrawn(ids, false);
}
