import type { AnyActorRef, EventObject, InspectionEvent } from "xstate";
import type { DelayedEventRecord } from "../persistence/actorRecord.js";
import { type CapturedEvent, captureEvent, reviveEvent } from "./storedEvents.js";

/** Follows one actor tree's pending XState delayed events and schedules stored ones again after a restart. */
export interface DelayTracker {
  /**
   * The tree's pending delayed events as JSON records, in scheduling order: source and target as child-id
   * paths from the root ([] is the root), due time by `now`. One whose receiver has stopped is left out
   * (XState drops it); after the root stops, what was pending then. Throws, naming the event, when one
   * cannot be stored (not JSON, or it involves an actor outside the tree).
   */
  pending(): DelayedEventRecord[];
  /**
   * After the restored actor has started: schedules each record again with XState, due at its original
   * time (overdue ones at once, in due order, ties in scheduling order). Records whose source or target
   * is not running, or that are already pending, are returned as skipped.
   */
  restore(records: readonly DelayedEventRecord[]): { skipped: DelayedEventRecord[] };
  /** Called whenever the set of pending delayed events changes (schedule, cancel, delivery, restore). */
  onChange: (() => void) | undefined;
}

interface Pending {
  source: AnyActorRef;
  target: AnyActorRef;
  /** XState's id for the event: `cancel(id)` in `source` cancels it while it is the latest under that id. */
  id: string;
  /** The key XState's scheduler keeps it under (the id, or a fresh one for a restored uncancellable event). */
  key: string;
  /** The object XState delivers: our own copy, so its delivery is recognised by identity. */
  delivered: EventObject;
  /** The event as stored, or why it cannot be. */
  stored: CapturedEvent | Error;
  dueAt: number;
  /** Child-id paths, found when scheduled; the target's is undefined when it had already stopped. */
  sourcePath: string[] | undefined;
  targetPath: string[] | undefined;
}

const tracked = new WeakSet<object>();

/**
 * Follows the delayed events of `actor`'s tree by wall-clock due time on `now`: XState keeps them in
 * memory only, so a restored snapshot never fires its `after` transitions. Call it before `actor.start()`,
 * with a `clock` on the same time as `now`.
 */
export function trackDelays(actor: AnyActorRef, o: { now: () => number }): DelayTracker {
  const { scheduler } = actor.system;
  if (tracked.has(scheduler))
    throw new Error(`trackDelays: the delays of actor ${JSON.stringify(actor.id)} are already tracked`);
  tracked.add(scheduler);
  const { now } = o;
  // Pending events by delivered object (scheduling order), and the latest under each scheduler key: a
  // second one under a key leaves the first's timer running, but only the latest can be cancelled.
  const byEvent = new Map<EventObject, Pending>();
  const latest = new Map<string, Pending>();
  let started = false;
  let quiet = false;
  let generated = 0;

  const keyOf = (source: AnyActorRef, id: string) => `${source.sessionId}\u0000${id}`;
  const changed = () => {
    if (!quiet) tracker.onChange?.();
  };
  // Cancelled or delivered: XState's scheduler empties the key's slot either way, whichever event holds it.
  const forget = (entry: Pending) => {
    byEvent.delete(entry.delivered);
    latest.delete(entry.key);
  };
  const freshId = (source: AnyActorRef) => {
    let id: string;
    do id = `durable.delayed.${generated++}`;
    while (latest.has(keyOf(source, id)));
    return id;
  };
  const locate = (ref: AnyActorRef) => pathOf(actor, ref);
  const capture = (event: EventObject): CapturedEvent | Error => {
    try {
      return captureEvent(event, actor, locate);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };

  const schedule = scheduler.schedule.bind(scheduler);
  const cancel = scheduler.cancel.bind(scheduler);
  /** Schedules `event` with XState's scheduler under `schedulerId` and follows it as XState's `id`. */
  const add = (
    source: AnyActorRef,
    target: AnyActorRef,
    event: EventObject,
    at: { id: string; dueAt: number; delay: number; schedulerId?: string },
  ) => {
    const { id, dueAt, delay, schedulerId = id } = at;
    const delivered = { ...event };
    const entry: Pending = {
      source,
      target,
      id,
      key: keyOf(source, schedulerId),
      delivered,
      stored:
        target.system === actor.system
          ? capture(event)
          : new Error(`it is sent to actor ${JSON.stringify(target.id)}, which is not in the actor's tree`),
      dueAt,
      sourcePath: pathOf(actor, source),
      targetPath: pathOf(actor, target),
    };
    latest.set(entry.key, entry);
    byEvent.set(delivered, entry);
    schedule(source, target, delivered, delay, schedulerId);
    changed();
  };
  // XState looks these up on `system.scheduler` at each call: replacing them sees every delay of the tree.
  scheduler.schedule = (source, target, event, delay, id) => {
    add(source, target, event, { id: id ?? freshId(source), dueAt: now() + delay, delay });
  };
  scheduler.cancel = (source, id) => {
    cancel(source, id);
    // Stopping the root cancels every delay of the tree; they are still pending for the next start.
    if (statusOf(actor) === "stopped") return;
    const entry = latest.get(keyOf(source, id));
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

  // Whether the event's receiver is still the actor it was sent to (each check walks its path only).
  const receives = (entry: Pending, rootStopped: boolean): boolean => {
    if (rootStopped || entry.target === actor || entry.target.system !== actor.system) return true;
    return entry.targetPath !== undefined && refAt(actor, entry.targetPath) === entry.target;
  };
  const record = (entry: Pending): DelayedEventRecord => {
    const { stored } = entry;
    if (stored instanceof Error) {
      throw new Error(
        `delayed event ${JSON.stringify(entry.delivered.type)} of ${describe(actor, entry.source, entry.sourcePath)} ` +
          `cannot be stored: ${stored.message}`,
      );
    }
    // A payload's actor that has stopped since (or was replaced under its id) is stored as stopped.
    const { refs } = stored;
    const bound = (ref: AnyActorRef) => {
      const path = refs?.get(ref);
      return path !== undefined && refAt(actor, path) === ref ? path : undefined;
    };
    const moved =
      refs !== undefined && [...refs].some(([ref, path]) => path !== undefined && bound(ref) === undefined);
    return {
      id: entry.id,
      source: [...(entry.sourcePath ?? [])],
      target: [...(entry.targetPath ?? [])],
      event: moved ? captureEvent(entry.delivered, actor, bound).json : { ...stored.json },
      dueAt: entry.dueAt,
      ...(latest.get(keyOf(entry.source, entry.id)) === entry ? {} : { cancellable: false as const }),
    };
  };

  const tracker: DelayTracker = {
    onChange: undefined,
    pending() {
      const records: DelayedEventRecord[] = [];
      const rootStopped = statusOf(actor) === "stopped";
      for (const entry of byEvent.values()) {
        // XState drops an event whose receiver has stopped (a child stopped, or replaced under its id).
        if (entry.sourcePath !== undefined && receives(entry, rootStopped)) records.push(record(entry));
      }
      return records;
    },
    restore(records) {
      // XState schedules again at start what was scheduled before it: each event would fire twice.
      if (!started) throw new Error("restore: call it after actor.start(), not before");
      records.forEach(checkRecord);
      const skipped: DelayedEventRecord[] = [];
      // The keys whose cancellable event is still to be scheduled.
      const cancellableLater = new Set<string>();
      // A stable sort: ties keep their scheduling order.
      const found = [...records]
        .sort((a, b) => a.dueAt - b.dueAt)
        .flatMap((r) => {
          const source = refAt(actor, r.source);
          const target = refAt(actor, r.target);
          const key = source === undefined ? "" : keyOf(source, r.id);
          const cancellable = r.cancellable !== false;
          if (
            source === undefined ||
            target === undefined ||
            (cancellable && (latest.has(key) || cancellableLater.has(key)))
          ) {
            skipped.push(r);
            return [];
          }
          if (cancellable) cancellableLater.add(key);
          return [{ r, source, target, key, cancellable }];
        });
      quiet = true;
      try {
        for (const { r, source, target, key, cancellable } of found) {
          // An uncancellable event keeps its id only if a cancellable one scheduled after it takes it back.
          const schedulerId = cancellable || cancellableLater.has(key) ? r.id : freshId(source);
          if (cancellable) cancellableLater.delete(key);
          const event = reviveEvent(r.event, (path) => refAt(actor, path)) as EventObject;
          add(source, target, event, {
            id: r.id,
            dueAt: r.dueAt,
            delay: Math.max(0, r.dueAt - now()),
            schedulerId,
          });
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

function childrenOf(ref: AnyActorRef): Record<string, AnyActorRef | undefined> {
  const snapshot: unknown = ref.getSnapshot();
  if (typeof snapshot !== "object" || snapshot === null || !("children" in snapshot)) return {};
  return snapshot.children as Record<string, AnyActorRef | undefined>;
}

/** `ref`'s child-id path from `root`, found through the snapshots' `children`. */
function pathOf(root: AnyActorRef, ref: AnyActorRef): string[] | undefined {
  if (ref === root) return [];
  for (const [id, child] of Object.entries(childrenOf(root))) {
    if (child === undefined) continue;
    const rest = pathOf(child, ref);
    if (rest !== undefined) return [id, ...rest];
  }
  return undefined;
}

/** The running actor at `path` from `root`. */
function refAt(root: AnyActorRef, path: readonly string[]): AnyActorRef | undefined {
  let ref: AnyActorRef | undefined = root;
  for (const id of path) {
    ref = Object.hasOwn(childrenOf(ref), id) ? childrenOf(ref)[id] : undefined;
    if (ref === undefined) return undefined;
  }
  return statusOf(ref) === "active" ? ref : undefined;
}

/** An actor of the tree as an error names it: its place in the tree and its machine's id, when it has one. */
function describe(root: AnyActorRef, ref: AnyActorRef, path: readonly string[] | undefined): string {
  const place =
    path === undefined || path.length === 0
      ? `${ref === root ? "the root actor " : "actor "}${JSON.stringify(ref.id)}`
      : `actor ${JSON.stringify(path.join("/"))} of ${JSON.stringify(root.id)}`;
  const machine = typeof ref.src === "string" ? ref.src : (ref.src as { id?: unknown }).id;
  return typeof machine === "string" && machine !== "(machine)"
    ? `${place} (machine ${JSON.stringify(machine)})`
    : place;
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
  if (record.cancellable !== undefined && record.cancellable !== false)
    problems.push("cancellable is neither false nor absent");
  if (problems.length > 0)
    throw new Error(`restore: delayed event record ${index} is invalid: ${problems.join("; ")}`);
}
