import type { AnyActorRef } from "xstate";
import type { Due } from "../machines/index.js";

/**
 * The durable timers an actor tree owes: the `due` of the root's context and of every child's, at any
 * depth. The runtime delivers each to the root, which forwards it to the child that owns it.
 */
export function collectDue(actor: AnyActorRef): Array<{ event: string; dueAt: number }> {
  const found: Array<{ event: string; dueAt: number }> = [];
  const visit = (ref: AnyActorRef) => {
    const snapshot = ref.getSnapshot() as {
      status?: string;
      context?: { due?: Due };
      children?: Record<string, AnyActorRef | undefined>;
    };
    if (snapshot.status !== "active") return;
    const due = snapshot.context?.due;
    if (due !== undefined) found.push({ event: due.event, dueAt: due.at });
    for (const child of Object.values(snapshot.children ?? {})) if (child !== undefined) visit(child);
  };
  visit(actor);
  return found;
}
