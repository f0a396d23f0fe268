import type { AnyActorRef } from "xstate";
import type { DurableActorInfo } from "./durableHostTypes.js";

/** What the host tells of an actor, from its snapshot (live) or its stored one. */
export function info(id: string, kind: string, snapshot: unknown): DurableActorInfo {
  const s = (snapshot ?? {}) as { status?: unknown; value?: unknown; context?: unknown };
  return {
    id,
    kind,
    status: typeof s.status === "string" ? s.status : "unknown",
    value: s.value,
    context: s.context,
  };
}

/** Resolves once an actor is no longer active (a promise actor has settled, or it was stopped). */
export function settled(actor: AnyActorRef): Promise<void> {
  return new Promise((resolve) => {
    if ((actor.getSnapshot() as { status: string }).status !== "active") return resolve();
    const subscription = actor.subscribe({
      complete: () => {
        subscription.unsubscribe();
        resolve();
      },
      error: () => resolve(),
    });
  });
}

export function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
