import type { Entry } from "../durable/hostedActors.js";

/** The kinds of actor the runtime hosts: a sessionsSend flow, a discordSend collaboration. */
export type ActorKind = "a2aFlow" | "collaborate";

/**
 * Resolves with `pick(entry)` once it returns a value and the snapshot showing it is on disk: what a
 * caller is told has happened survives a crash. Re-checked after every persisted change. An actor
 * that failed gives `onFailure(error)` instead, or the promise rejects with its error.
 */
export function until<T>(
  entry: Entry,
  pick: () => T | undefined,
  onFailure?: (error: unknown) => T,
): Promise<T> {
  return new Promise((resolveValue, rejectValue) => {
    const check = () => {
      const s = entry.actor.getSnapshot() as { status: string; error?: unknown };
      if (s.status === "error" && onFailure === undefined) {
        entry.watchers.delete(check);
        entry.abandoned.delete(rejectValue);
        rejectValue(s.error);
        return;
      }
      const value = s.status === "error" ? onFailure?.(s.error) : pick();
      if (value === undefined) return;
      entry.watchers.delete(check);
      entry.lastWrite
        .then(() => resolveValue(value), rejectValue)
        .finally(() => entry.abandoned.delete(rejectValue));
    };
    entry.abandoned.add(rejectValue);
    entry.watchers.add(check);
    check();
  });
}
