import { ActorTakenOverError, type SnapshotStore } from "../persistence/index.js";
import type { ThreadState } from "./ThreadState.js";

// A call (discordSend, sessionsSend) that stop() rejects while none of its actor's writes has landed
// (the database out of reach) may have left its actor stored all the same: a write can land with its
// reply lost. The caller was told it failed, and may call again: so that the rejected one is never
// carried out, its actor's id is kept in the thread state (saved in the state directory, which only
// this runtime holds) and the next start withdraws it before any actor resumes. (An actor stored
// before the stop resumes, as every actor does.)

/**
 * Withdraws the actors of rejected calls that were stored all the same: archived as failed, never run.
 * One another process took over meanwhile is its own (and is said). A store that cannot be read or
 * written rejects, and the ids stay for the next start.
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
