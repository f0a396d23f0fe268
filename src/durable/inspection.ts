import type { AnyActorRef, InspectionEvent } from "xstate";

type InspectFn = (event: InspectionEvent) => void;

/** The `inspect` option as a function; anything unusable is a TypeError naming `owner`. */
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

/** One tree's inspection: every actor's emitted events, every snapshot change, then the user's inspector. */
export function treeInspector(handlers: {
  onEmitted: (event: { type: string }) => void;
  onTreeChanged: () => void;
  user?: InspectFn;
}): InspectFn {
  // An event that changed nothing reports the same snapshot object: nothing to write.
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
