import { createActor, fromPromise } from "xstate";
import type { CollaborateInput } from "./collaborateContext.js";
import { collaborateMachine } from "./collaborateMachine.js";
import type { PostMessageInput, PostMessageOutput } from "./discordActors.js";

type Json = Record<string, unknown>;

/**
 * Turns a persisted collaborate snapshot of version 1 into one of version 2 (the SnapshotStore's
 * `migrations`), or returns undefined when it cannot, and the store quarantines the record.
 *
 * Version 1 opened a new thread from the mention itself, posted in the parent channel
 * (`sending` → `creatingThread`); version 2 opens it from a starter message and posts the mention in
 * the thread (`postingStarter` → `creatingThread` → `sending`). Everything else is unchanged, so
 * only a new-thread collaboration whose thread is not known yet changes:
 * - `creatingThread`, or `retrying` after the mention was posted: the mention in the channel becomes
 *   the starter (the thread is opened from it, or found), and the mention is posted again in the
 *   thread, with the same nonce key. Within Discord's nonce window that post returns the channel
 *   mention, as version 1 would have tracked it;
 * - `retrying` before the mention was posted: unchanged, the retry starts at the starter;
 * - `sending` (the channel mention in flight): restarted at `postingStarter`.
 */
export function migrateCollaborateSnapshot(snapshot: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1 || !isObject(snapshot) || !isObject(snapshot.context)) return undefined;
  const { value, context } = snapshot;
  if (
    snapshot.status !== "active" ||
    context.mode !== "new_thread" ||
    context.resolvedThreadId !== undefined
  ) {
    return snapshot;
  }
  const { messageId, sentAt: _sentAt, ...rest } = context;
  if (value === "retrying" && messageId === undefined) return snapshot;
  if ((value === "retrying" || value === "creatingThread") && typeof messageId === "string") {
    return { ...snapshot, context: { ...rest, starterMessageId: messageId } };
  }
  if (value === "sending" && messageId === undefined) return restartAtStarter(context);
  return undefined;
}

/** The collaboration started again from its input, up to its starter post (which runs once restored). */
function restartAtStarter(context: Json): unknown {
  const hanging = fromPromise<PostMessageOutput, PostMessageInput>(() => new Promise<never>(() => {}));
  const actor = createActor(collaborateMachine.provide({ actors: { postStarter: hanging } }), {
    input: context as CollaborateInput,
  });
  // A context that no longer parses as input would fail the actor: leave it to the quarantine.
  if (actor.getSnapshot().status !== "active") return undefined;
  actor.start();
  const restarted: unknown = actor.getPersistedSnapshot();
  actor.stop();
  if (!isObject(restarted) || !isObject(restarted.context) || restarted.value !== "postingStarter") {
    return undefined;
  }
  const lastAt = Math.max(Number(restarted.context.lastAt), Number(context.lastAt) || 0);
  return { ...restarted, context: { ...restarted.context, lastAt } };
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
