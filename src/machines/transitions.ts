import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";
import { defined } from "./schemas.js";

/** One transition of a machine's definition, as the diagrams draw it and the coverage tests count it. */
export interface TransitionInfo {
  /** The source state's id, e.g. `replyWait.waiting` (the machine id alone for root transitions). */
  source: string;
  /** The event type; `always` for eventless transitions. */
  event: string;
  guard?: string;
  /** Target state ids; empty for a transition that only runs actions. */
  targets: string[];
  reenter: boolean;
  /** Unique per transition: source, event, guard and targets. */
  key: string;
}

/** Every transition a machine defines, in document order, eventless ones included. */
export function listTransitions(machine: AnyStateMachine): TransitionInfo[] {
  const found: TransitionInfo[] = [];
  const visit = (node: AnyStateNode) => {
    for (const definitions of node.transitions.values())
      for (const d of definitions) found.push(describeTransition(d));
    for (const d of node.always ?? []) found.push(describeTransition(d));
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return found;
}

export function describeTransition(d: AnyTransitionDefinition): TransitionInfo {
  const event = d.eventType === "" ? "always" : d.eventType;
  const guard = guardName(d.guard);
  const targets = (d.target ?? []).map((t: AnyStateNode) => t.id);
  const key = `${d.source.id} ${event}${guard ? ` [${guard}]` : ""} → ${targets.length ? targets.join(",") : "(actions only)"}`;
  return {
    source: d.source.id,
    event,
    ...defined({ guard }),
    targets,
    reenter: d.reenter,
    key,
  };
}

/** A guard's name: its type, or `and(a, b)` for XState's combinators. */
export function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const parts = (guard as { guards?: unknown[] }).guards;
    return Array.isArray(parts)
      ? `${guard.name}(${parts.map(guardName).join(", ")})`
      : guard.name || "inline";
  }
  if (typeof guard === "object" && "type" in guard) return String((guard as { type: unknown }).type);
  return "inline";
}
