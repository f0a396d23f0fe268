import type { AnyActorRef, EventObject, InspectionEvent } from "xstate";
import type { DelayedEventRecord } from "../persistence/actorRecord.js";

/** Follows one actor tree's pending XState delayed events and schedules stored ones again after a restart. */
export interface DelayTracker {
  /**
   * The tree's pending delayed events (`after` transitions, delayed `raise`/`sendTo`) as records: who
   * scheduled each and who receives it as child-id paths from the root ([] is the root), when it is due
   * by `now`, JSON only. After the root actor is stopped it still lists what was pending at the stop.
   * An event sent to an actor outside the tree is left out: it cannot be found again after a restart.
   * Throws when a pending event cannot be stored as JSON.
   */
  pending(): DelayedEventRecord[];
  /**
   * Call after the restored actor has started: schedules each stored delayed event again, due at its
   * original time (an overdue one at once, once), so XState delivers and cancels it as its own — leaving
   * the state that scheduled it cancels it as usual. Records whose source or target is no longer a
   * running actor of the tree, or that are already pending, are not scheduled: they are returned.
   */
  restore(records: readonly DelayedEventRecord[]): { skipped: DelayedEventRecord[] };
  /** Called whenever the set of pending delayed events changes (schedule, cancel, delivery, restore). */
  onChange: (() => void) | undefined;
}

interface Pending {
  source: AnyActorRef;
  target: AnyActorRef;
  id: string;
  /** The object XState delivers: our own copy, so its delivery is recognised by identity. */
  delivered: EventObject;
  /** The event as stored, or why it cannot be. */
  json: DelayedEventRecord["event"] | Error;
  dueAt: number;
  /** Child-id paths, found when scheduled (a stopped child leaves its parent's snapshot); none outside the tree. */
  sourcePath: string[] | undefined;
  targetPath: string[] | undefined;
}

const tracked = new WeakSet<object>();

/**
 * Follows the delayed events of the actor tree rooted at `actor` (its invoked and spawned children
 * included), by wall-clock due time on `now`. Call it before `actor.start()`, and give the actor a
 * `clock` whose timers run on the same time as `now`.
 *
 * XState keeps delayed events in memory only: a snapshot restored with `createActor(machine, { snapshot })`
 * never fires the `after` transitions it was waiting for. Store `pending()` beside the persisted
 * snapshot and pass it to `restore()` after the restored actor starts.
 */
export function trackDelays(actor: AnyActorRef, o: { now: () => number }): DelayTracker {
  const { scheduler } = actor.system;
  if (tracked.has(scheduler))
    throw new Error(`trackDelays: the delays of actor ${JSON.stringify(actor.id)} are already tracked`);
  tracked.add(scheduler);
  const { now } = o;
  const byKey = new Map<string, Pending>();
  const byEvent = new Map<EventObject, Pending>();
  let started = false;
  let restoringDueAt: number | undefined;
  let quiet = false;
  let generated = 0;

  const keyOf = (source: AnyActorRef, id: string) => `${source.sessionId}\u0000${id}`;
  const changed = () => {
    if (!quiet) tracker.onChange?.();
  };
  const forget = (entry: Pending) => {
    byKey.delete(keyOf(entry.source, entry.id));
    byEvent.delete(entry.delivered);
  };
  const freshId = (source: AnyActorRef) => {
    let id: string;
    do id = `durable.delayed.${generated++}`;
    while (byKey.has(keyOf(source, id)));
    return id;
  };

  const schedule = scheduler.schedule.bind(scheduler);
  const cancel = scheduler.cancel.bind(scheduler);
  // XState looks these up on `system.scheduler` at each call (after-transitions, delayed raise/sendTo,
  // exits and actor stops), so replacing them sees every delayed event of the tree.
  scheduler.schedule = (source, target, event, delay, id) => {
    const eventId = id ?? freshId(source);
    const delivered = { ...event };
    const previous = byKey.get(keyOf(source, eventId));
    if (previous !== undefined) forget(previous);
    const entry: Pending = {
      source,
      target,
      id: eventId,
      delivered,
      json: toJson(event),
      dueAt: restoringDueAt ?? now() + delay,
      sourcePath: pathOf(actor, source),
      targetPath: pathOf(actor, target),
    };
    byKey.set(keyOf(source, eventId), entry);
    byEvent.set(delivered, entry);
    schedule(source, target, delivered, delay, eventId);
    changed();
  };
  scheduler.cancel = (source, id) => {
    cancel(source, id);
    // Stopping the root cancels every delay of the tree; they are still pending for the next start.
    if (statusOf(actor) === "stopped") return;
    const entry = byKey.get(keyOf(source, id));
    if (entry === undefined) return;
    forget(entry);
    changed();
  };
  // A delivered delayed event is relayed like any other: inspection reports it with the very object scheduled.
  actor.system.inspect((event: InspectionEvent) => {
    if (event.type !== "@xstate.event") return;
    if (event.actorRef === actor && event.event.type === "xstate.init") started = true;
    const entry = byEvent.get(event.event);
    if (entry === undefined || entry.target !== event.actorRef) return;
    forget(entry);
    changed();
  });

  const tracker: DelayTracker = {
    onChange: undefined,
    pending() {
      const records: DelayedEventRecord[] = [];
      for (const entry of byKey.values()) {
        if (entry.sourcePath === undefined || entry.targetPath === undefined) continue;
        if (entry.json instanceof Error) {
          throw new Error(
            `delayed event ${JSON.stringify(entry.delivered.type)} of actor ${describePath(entry.sourcePath)} ` +
              `cannot be stored: ${entry.json.message}`,
          );
        }
        records.push({
          id: entry.id,
          source: [...entry.sourcePath],
          target: [...entry.targetPath],
          event: { ...entry.json },
          dueAt: entry.dueAt,
        });
      }
      return records;
    },
    restore(records) {
      // XState schedules again at start what was scheduled before it: each event would fire twice.
      if (!started) throw new Error("restore: call it after actor.start(), not before");
      records.forEach(checkRecord);
      const skipped: DelayedEventRecord[] = [];
      quiet = true;
      try {
        for (const record of records) {
          const source = refAt(actor, record.source);
          const target = refAt(actor, record.target);
          if (source === undefined || target === undefined || byKey.has(keyOf(source, record.id))) {
            skipped.push(record);
            continue;
          }
          restoringDueAt = record.dueAt;
          try {
            scheduler.schedule(
              source,
              target,
              { ...record.event },
              Math.max(0, record.dueAt - now()),
              record.id,
            );
          } finally {
            restoringDueAt = undefined;
          }
        }
      } finally {
        quiet = false;
      }
      if (records.length > 0) changed();
      return { skipped };
    },
  };
  return tracker;
}

function statusOf(ref: AnyActorRef): unknown {
  const snapshot: unknown = ref.getSnapshot();
  return typeof snapshot === "object" && snapshot !== null && "status" in snapshot
    ? snapshot.status
    : undefined;
}

function childrenOf(ref: AnyActorRef): Array<[string, AnyActorRef]> {
  const snapshot: unknown = ref.getSnapshot();
  if (typeof snapshot !== "object" || snapshot === null || !("children" in snapshot)) return [];
  const children = snapshot.children as Record<string, AnyActorRef | undefined>;
  return Object.entries(children).filter((entry): entry is [string, AnyActorRef] => entry[1] !== undefined);
}

/** `ref`'s child-id path from `root`, found through the snapshots' `children`. */
function pathOf(root: AnyActorRef, ref: AnyActorRef): string[] | undefined {
  if (ref === root) return [];
  for (const [id, child] of childrenOf(root)) {
    const rest = pathOf(child, ref);
    if (rest !== undefined) return [id, ...rest];
  }
  return undefined;
}

/** The running actor at `path` from `root`. */
function refAt(root: AnyActorRef, path: readonly string[]): AnyActorRef | undefined {
  let ref: AnyActorRef | undefined = root;
  for (const id of path) {
    ref = childrenOf(ref).find(([childId]) => childId === id)?.[1];
    if (ref === undefined) return undefined;
  }
  return statusOf(ref) === "active" ? ref : undefined;
}

function toJson(event: EventObject): DelayedEventRecord["event"] | Error {
  try {
    const json: unknown = JSON.parse(JSON.stringify(event));
    if (typeof json === "object" && json !== null && "type" in json && typeof json.type === "string")
      return json as DelayedEventRecord["event"];
    return new Error("it is not a JSON object with a string type");
  } catch (error) {
    return new Error(`it is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function describePath(path: readonly string[]): string {
  return path.length === 0 ? "(the root)" : JSON.stringify(path.join("/"));
}

function checkRecord(record: DelayedEventRecord, index: number): void {
  const problems: string[] = [];
  if (typeof record.id !== "string" || record.id === "") problems.push("id is not a non-empty string");
  for (const key of ["source", "target"] as const) {
    const path: unknown = record[key];
    if (!Array.isArray(path) || !path.every((id) => typeof id === "string"))
      problems.push(`${key} is not a list of child ids`);
  }
  const event: unknown = record.event;
  if (typeof event !== "object" || event === null || typeof (event as { type?: unknown }).type !== "string")
    problems.push("event has no string type");
  if (typeof record.dueAt !== "number" || !Number.isFinite(record.dueAt))
    problems.push("dueAt is not a finite number");
  if (problems.length > 0)
    throw new Error(`restore: delayed event record ${index} is invalid: ${problems.join("; ")}`);
}
