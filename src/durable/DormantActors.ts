import type { ActorRecord } from "../persistence/actorRecord.js";
import { type ActorTable, earliestDelayDue, onlyWaits } from "./ActorTable.js";
import type { Entry } from "./hostedActors.js";
import { TimerQueue } from "./TimerQueue.js";
import type { RuntimeTimers } from "./timers.js";

export interface DormantActorsOptions {
  actors: ActorTable;
  now: () => number;
  timers: RuntimeTimers;
  /** How long a hosted actor stays hosted once its latest change is durable; Infinity: for good. */
  afterMs: number;
  /** Hosts a stored live actor again, with its delays; `owned`: no one else holds the record, it may be restored from as it is. */
  resume: (record: Readonly<ActorRecord>, owned: boolean) => void;
  /** The actor's record as it is now (as it was last written: nothing changed since). */
  recordOf: (entry: Entry) => ActorRecord;
  /**
   * Resolves once the writes queued so far have landed: asked after each turn of the backlog found at
   * start, the turn after next waits for it, so at most two turns of woken actors wait for their writes,
   * not thousands. While those writes fail and are retried it waits too: an actor woken then could run no
   * side effect.
   */
  backlogTurnDone: () => Promise<void>;
  /** The store's own copy of the actor's last written record, when the store keeps one in memory. */
  stored: (id: string) => Readonly<ActorRecord> | undefined;
}

/**
 * Live actors kept as their records rather than as XState actors: every one adopted at start (one whose
 * side effect must run again wakes at once), and hosted ones that only wait (for an event or a delay),
 * idle for `afterMs` since their latest change became durable. Each is hosted again at its first event
 * or its wake time.
 */
export class DormantActors {
  /** When each dormant actor wakes: its earliest delay, or at once when an effect must run again. */
  private readonly wakes: TimerQueue;
  /** When each idle hosted actor goes dormant; none while it changes or its change is being written. */
  private readonly idles: TimerQueue;
  /** The records made here as actors went dormant (the store keeps none): held by no one else, so woken without a copy. */
  private readonly made = new WeakSet<Readonly<ActorRecord>>();

  constructor(private readonly o: DormantActorsOptions) {
    this.wakes = new TimerQueue(o.now, (id) => this.wake(id), o.timers, o.backlogTurnDone);
    this.idles = new TimerQueue(o.now, (id) => this.retireIdle(id), o.timers);
  }

  /**
   * A stored live actor, kept as its record. One that only waits wakes at its earliest delay. One whose
   * tree ran a side effect when its process stopped wakes at once, to run it again: after an outage, in
   * the turns of the backlog start() found, by when its record was written, so a start hosts none of
   * them and the first effects run while the rest wait their turn.
   */
  keep(record: Readonly<ActorRecord>): void {
    this.o.actors.dormant.set(record.id, record);
    const wakeAt = onlyWaits(record) ? earliestDelayDue(record) : Math.min(record.updatedAt, this.o.now());
    this.wakes.set(record.id, wakeAt);
  }

  /** The hosted actor with this id; a dormant one is hosted again first. */
  wake(id: string): Entry | undefined {
    const { actors } = this.o;
    const entry = actors.hosted.get(id);
    if (entry !== undefined) return entry;
    const record = actors.dormant.get(id);
    if (record === undefined) return undefined;
    actors.dormant.delete(id);
    this.wakes.set(id, undefined);
    this.o.resume(record, this.made.has(record));
    return actors.hosted.get(id);
  }

  /**
   * A spawned actor whose first record was just queued: one that only waits is its record from now on,
   * whatever `afterMs` short of Infinity. It has handled no event yet, so nothing says another comes
   * soon, and a burst of spawns would otherwise keep every actor whose write is in flight hosted.
   */
  spawned(entry: Entry): void {
    if (!Number.isFinite(this.o.afterMs) || this.o.actors.hosted.get(entry.id) !== entry) return;
    // The store's copy is the record just queued: a store that keeps none, or refused it, leaves it hosted.
    const record = this.o.stored(entry.id);
    if (record !== undefined) this.retire(entry, record);
  }

  /** The hosted actor changed: it stays hosted until that change is durable. */
  busy(id: string): void {
    this.idles.set(id, undefined);
  }

  /** The hosted actor's record is queued: it is idle once that write lands, unless it changed meanwhile. */
  written(entry: Entry): void {
    const write = entry.lastWrite;
    const landed = () => {
      if (entry.lastWrite === write && this.o.actors.hosted.get(entry.id) === entry) this.idle(entry.id);
    };
    write.then(landed, () => undefined);
  }

  /** The hosted actor's latest change is durable (or it was restored from its record): idle from now. */
  idle(id: string): void {
    if (Number.isFinite(this.o.afterMs)) this.idles.set(id, this.o.now() + this.o.afterMs);
  }

  /** The actor is neither hosted nor dormant here any more. */
  forget(id: string): void {
    this.wakes.set(id, undefined);
    this.idles.set(id, undefined);
  }

  /** Wakes every actor due by now (fake timers hold the timeout). */
  fireDue(): void {
    this.wakes.fireDue();
  }

  /** The dormant actors' wake-ups. */
  get pending(): number {
    return this.wakes.size;
  }

  start(): void {
    this.wakes.start();
    this.idles.start();
  }

  stop(): void {
    this.wakes.stop();
    this.idles.stop();
  }

  /** An idle hosted actor goes back to being its record, unless a caller waits on it (looked at again later). */
  private retireIdle(id: string): void {
    const entry = this.o.actors.hosted.get(id);
    if (entry === undefined) return;
    if (entry.watchers.size > 0 || entry.abandoned.size > 0) return this.idle(id);
    // Nothing changed since the last write landed: the store's copy of it is the record, held once.
    let record = this.o.stored(id);
    if (record === undefined) {
      try {
        record = this.o.recordOf(entry);
      } catch {
        return; // a state that is not JSON: its write reports it
      }
      this.made.add(record);
    }
    this.retire(entry, record);
  }

  /**
   * The hosted actor becomes `record`, its state as last queued, unless a side effect runs in its tree
   * (its end is a change, and the actor is idle again after). No caller waits on it: an idle one's are
   * looked at first, and a spawned one has none yet.
   */
  private retire(entry: Entry, record: Readonly<ActorRecord>): void {
    if (!onlyWaits(record)) return;
    this.o.actors.hosted.delete(entry.id);
    this.keep(record);
    // Unseen by inspectors: to them the actor lives on, and the same id restored is the same actor.
    entry.silence();
    entry.actor.stop();
  }
}

/**
 * How long an idle actor stays hosted by default. A restore costs well under a millisecond, and a
 * hosted actor ~10 KB: held for a second, a burst of creates at 5,000/s keeps 5,000 of them.
 */
const DEFAULT_DORMANT_AFTER_MS = 100;

/** The `dormantAfterMs` option, checked: ms ≥ 0, or Infinity to keep every actor hosted. */
export function dormantAfterMs(value: unknown, owner: string): number {
  if (value === undefined) return DEFAULT_DORMANT_AFTER_MS;
  if (typeof value === "number" && value >= 0) return value;
  throw new TypeError(
    `${owner}: dormantAfterMs must be a number of ms ≥ 0 (or Infinity), got ${String(value)}`,
  );
}
