import type { AnyActorRef } from "xstate";

/** The kinds of actor the runtime hosts: a sessionsSend flow, a discordSend collaboration. */
export type ActorKind = "a2aFlow" | "collaborate";

/** An actor the runtime hosts, with what its callers wait on. */
export interface Hosted {
  id: string;
  kind: ActorKind;
  actor: AnyActorRef;
  /** Called after every persisted change; used by callers waiting for a state. */
  watchers: Set<() => void>;
  /** Callers still waiting, told when the runtime stops before their answer is durable. */
  abandoned: Set<(error: Error) => void>;
  /** The write that holds the latest snapshot: an answer is given only once it is durable. */
  lastWrite: Promise<void>;
}

/**
 * Resolves with `pick(entry)` once it returns a value and the snapshot showing it is on disk: what a
 * caller is told has happened survives a crash. Re-checked after every persisted change. An actor
 * that failed gives `onFailure(error)` instead, or the promise rejects with its error.
 */
export function until<T>(
  entry: Hosted,
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
