import type { ActorRecord } from "../persistence/actorRecord.js";
import type { DurableActorInfo } from "./durableHostTypes.js";
import { type Entry, info } from "./hostedActors.js";

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
    const entry = this.hosted.get(id);
    if (entry !== undefined) return info(id, entry.kind, entry.actor.getSnapshot(), metaOf(entry));
    const record = this.dormant.get(id) ?? this.finishing.get(id);
    return record === undefined ? undefined : info(id, record.machineId, record.snapshot, record.meta);
  }

  /** The hosted, dormant and finishing actors, without their context. */
  list(metaOf: MetaOf): Array<Omit<DurableActorInfo, "context">> {
    const hosted = [...this.hosted.values()].map((entry) =>
      info(entry.id, entry.kind, entry.actor.getSnapshot(), metaOf(entry)),
    );
    const records = [...this.dormant.values(), ...this.finishing.values()].map((record) =>
      info(record.id, record.machineId, record.snapshot, record.meta),
    );
    return [...hosted, ...records].map(({ context: _context, ...rest }) => rest);
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

  clear(): void {
    this.hosted.clear();
    this.dormant.clear();
    this.finishing.clear();
  }
}
