import type { AnyActorRef, InspectionEvent } from "xstate";

type InspectFn = (event: InspectionEvent) => void;

/**
 * The user's `inspect` option as a function: an @statelyai/inspect inspector (its `.inspect`
 * observer), an observer with `next`, or a function. Anything else is a TypeError naming `owner`, the
 * call that took the option.
 */
export function toInspectFn(inspect: unknown, owner: string): InspectFn | undefined {
  if (inspect === undefined || inspect === null) return undefined;
  if (typeof inspect === "function") return inspect as InspectFn;
  if (typeof inspect === "object") {
    const inner = (inspect as { inspect?: unknown }).inspect;
    if (inner !== undefined) return toInspectFn(inner, owner);
    const next = (inspect as { next?: unknown }).next;
    if (typeof next === "function") return (event) => next.call(inspect, event);
  }
  throw new TypeError(
    `${owner}: inspect must be an @statelyai/inspect inspector, an observer with next(), or a function`,
  );
}

/**
 * One inspection function per actor tree: it hears every actor the tree creates (so events emitted by
 * children reach the runtime), every snapshot change anywhere in the tree (so a child's progress is
 * persisted with its root), and passes everything on to the user's inspector.
 */
export function treeInspector(handlers: {
  onEmitted: (event: { type: string }) => void;
  onTreeChanged: () => void;
  user?: InspectFn;
}): InspectFn {
  // XState reports a snapshot after every event, the same object when the event changed nothing (no
  // transition was enabled): such an event is not a change, and nothing is written for it.
  const last = new WeakMap<object, unknown>();
  return (event) => {
    if (event.type === "@xstate.actor") {
      (event.actorRef as AnyActorRef & { on?: AnyActorRef["on"] }).on?.("*", handlers.onEmitted);
    } else if (event.type === "@xstate.snapshot" && last.get(event.actorRef) !== event.snapshot) {
      last.set(event.actorRef, event.snapshot);
      handlers.onTreeChanged();
    }
    handlers.user?.(event);
  };
}
