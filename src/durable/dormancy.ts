import type { ActorRecord } from "../persistence/actorRecord.js";

/**
 * Whether a stored actor only waits (for an event or a delay) and can stay a record: no promise,
 * callback or observable child (a snapshot without `value`) runs, which must run again at start.
 */
export function onlyWaits(record: Pick<ActorRecord, "status" | "snapshot">): boolean {
  return record.status === "active" && !runsAnEffect(record.snapshot);
}

function runsAnEffect(snapshot: unknown): boolean {
  const children = (snapshot as { children?: unknown } | undefined)?.children;
  if (typeof children !== "object" || children === null) return false;
  return Object.values(children).some((entry) => {
    const child = (entry as { snapshot?: { status?: unknown; value?: unknown } } | undefined)?.snapshot;
    if (child?.status !== "active") return false;
    return !("value" in child) || runsAnEffect(child);
  });
}

/** When the earliest of a stored actor's XState delays is due; undefined when it has none. */
export function earliestDelayDue(record: Pick<ActorRecord, "delayed">): number | undefined {
  const delays = (record.delayed ?? []).map((d) => d.dueAt);
  return delays.length === 0 ? undefined : Math.min(...delays);
}
