import type { ActorRecord } from "../persistence/actorRecord.js";
import type { DurableActorInfo } from "./durableHostTypes.js";
import { snapshotOutline } from "../persistence/recordLine.js";
import { type Entry, info, summary } from "./hostedActors.js";

type MetaOf = (entry: Entry) => Record<string, unknown> | undefined;

/**
 * The actors a host runs: hosted (XState actors), dormant (live records that only wait, restored on
 * their first event or due time) and finishing (finished, their last write still in flight).
 */
export class ActorTable {
  readonly hosted = new Map<string, Entry>();
  /** Live actors that only wait, kept as their records until their first event or due time. */
  readonly dormant = new Map<string, Readonly<ActorRecord>>();
  /** Finished actors whose last record is queued but not yet durable (the store archives it then). */
  readonly finishing = new Map<string, ActorRecord>();

  /** Whether the actor is hosted or dormant here. */
  has(id: string): boolean {
    return this.hosted.has(id) || this.dormant.has(id);
  }

  /** What is known here of an actor, without the store: hosted, dormant or finishing. */
  info(id: string, metaOf: MetaOf): DurableActorInfo | undefined {
    const found = this.hosted.get(id) ?? this.dormant.get(id) ?? this.finishing.get(id);
    return found === undefined ? undefined : info(found, metaOf);
  }

  /** The hosted, dormant and finishing actors, without their context. */
  list(metaOf: MetaOf): Array<Omit<DurableActorInfo, "context">> {
    const all = [...this.hosted.values(), ...this.dormant.values(), ...this.finishing.values()];
    return all.map((actor) => summary(actor, metaOf));
  }

  /** How many actors are hosted, how many dormant, and how many XState delays the hosted ones hold. */
  counts(): { live: number; dormant: number; delays: number } {
    let delays = 0;
    for (const entry of this.hosted.values()) {
      if (entry.actor.getSnapshot().status !== "active") continue;
      try {
        delays += entry.delays.pending().length;
      } catch {
        // A delay that cannot be stored is reported by the write; here it is simply not counted.
      }
    }
    return { live: this.hosted.size, dormant: this.dormant.size, delays };
  }

  /** A finished actor: no longer hosted, listed until its last write lands. */
  finish(entry: Entry, record: ActorRecord): void {
    this.hosted.delete(entry.id);
    this.finishing.set(entry.id, record);
    const landed = () => {
      if (this.finishing.get(entry.id) === record) this.finishing.delete(entry.id);
    };
    entry.lastWrite.then(landed, landed);
  }

  clear(): void {
    this.hosted.clear();
    this.dormant.clear();
    this.finishing.clear();
  }
}

/**
 * Whether a stored actor only waits (for an event or a delay) and can stay a record until then: no
 * promise, callback or observable child (a snapshot without `value`) runs, which must run again.
 */
export function onlyWaits(record: Readonly<ActorRecord>): boolean {
  return record.status === "active" && !runsAnEffect(snapshotOutline(record));
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
