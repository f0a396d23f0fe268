import { type AnyActorRef, createActor, type EventObject, fromCallback } from "xstate";
import type { DelayedEventRecord } from "../persistence/actorRecord.js";

/** An actor ref as stored: XState's `ref.toJSON()` plus its child-id path (none: it had stopped). */
interface StoredRef {
  xstate$$type: 1;
  id: string;
  path?: string[];
}

/** Where an actor is, as a child-id path from the root of the tree; undefined: it has stopped. */
export type Locate = (ref: AnyActorRef) => string[] | undefined;

/** A delayed event as JSON, and the actor refs its payload holds with their paths (most events hold none). */
export interface CapturedEvent {
  json: DelayedEventRecord["event"];
  refs?: Map<AnyActorRef, string[] | undefined>;
}

/**
 * `event` as JSON, each actor ref in it a {@link StoredRef}. Throws, saying why, when it is not JSON or
 * holds an actor outside `root`'s tree (a restarted host could not find it).
 */
export function captureEvent(event: EventObject, root: AnyActorRef, locate: Locate): CapturedEvent {
  let refs: Map<AnyActorRef, string[] | undefined> | undefined;
  const replaced = replaceRefs(event, (ref) => {
    if (ref.system !== root.system) {
      throw new Error(
        `it holds a reference to actor ${JSON.stringify(ref.id)}, which is not in the actor's tree`,
      );
    }
    refs ??= new Map();
    const path = refs.has(ref) ? refs.get(ref) : locate(ref);
    refs.set(ref, path);
    return { xstate$$type: 1, id: ref.id, ...(path === undefined ? {} : { path: [...path] }) };
  });
  let json: unknown;
  try {
    json = JSON.parse(JSON.stringify(replaced));
  } catch (error) {
    throw new Error(`it is not JSON (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  if (typeof json !== "object" || json === null || typeof (json as { type?: unknown }).type !== "string")
    throw new Error("it is not a JSON object with a string type");
  return { json: json as DelayedEventRecord["event"], ...(refs === undefined ? {} : { refs }) };
}

/** The stored event with each {@link StoredRef} the actor at its path again, or a stopped stand-in. */
export function reviveEvent(value: unknown, refAt: (path: string[]) => AnyActorRef | undefined): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => reviveEvent(item, refAt));
  if (isStoredRef(value))
    return (value.path === undefined ? undefined : refAt(value.path)) ?? stoppedActor(value.id);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, reviveEvent(item, refAt)]));
}

function isStoredRef(value: object): value is StoredRef {
  const v = value as Partial<StoredRef>;
  return v.xstate$$type === 1 && typeof v.id === "string" && (v.path === undefined || Array.isArray(v.path));
}

/** An actor that has stopped, as an actor that stopped while an event to it waited would be. */
function stoppedActor(id: string): AnyActorRef {
  const actor = createActor(
    fromCallback(() => undefined),
    { id },
  );
  return actor.start().stop();
}

// XState's test for an actor ref when it persists a context (`persistContext`): these three members.
function isActorRef(value: object): value is AnyActorRef {
  return "sessionId" in value && "send" in value && "ref" in value;
}

/** `value` with each actor ref replaced (copied only where one is); a cycle is left for JSON to refuse. */
function replaceRefs(
  value: unknown,
  replace: (ref: AnyActorRef) => StoredRef,
  ancestors = new WeakSet<object>(),
): unknown {
  if (typeof value !== "object" || value === null || ancestors.has(value)) return value;
  if (isActorRef(value)) return replace(value);
  ancestors.add(value);
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const [key, item] of Object.entries(value)) {
    const replaced = replaceRefs(item, replace, ancestors);
    if (replaced === item) continue;
    copy ??= Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
    (copy as Record<string, unknown>)[key] = replaced;
  }
  ancestors.delete(value);
  return copy ?? value;
}
