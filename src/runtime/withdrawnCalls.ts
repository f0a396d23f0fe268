import { ActorTakenOverError, type SnapshotStore } from "../persistence/index.js";
import type { ThreadState } from "./ThreadState.js";

/**
 * Before any actor resumes, archives as failed the actors of calls stop() rejected that were stored
 * anyway (a write can land with its reply lost): their caller was told the call failed and may retry.
 * One another process took over stays its own. If the store fails, the ids stay for the next start.
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
