import { type ActorRecord, InvalidActorRecordError } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import type { Entry } from "./hostedActors.js";
import type { RuntimeTimers } from "./timers.js";
import { displayText } from "../errors/displayText.js";

export interface SnapshotWriterOptions {
  /** The open store; undefined while the host is not running. */
  store: () => SnapshotStore | undefined;
  /** True from the moment the host stops: nothing more is queued, a failed write rejects. */
  stopped: () => boolean;
  /** Whether the actor is still hosted (one that is not has nothing newer than its last record). */
  hosted: (entry: Entry) => boolean;
  /** The actor's hosted entry now, hosted again if it went dormant; undefined when it is not here. */
  current: (entry: Entry) => Entry | undefined;
  /** The actor's record as it is now; throws when its state is not JSON. */
  recordOf: (entry: Entry) => ActorRecord;
  /** Told once a record is queued, in queueing order. */
  onQueued: (entry: Entry, record: ActorRecord) => void;
  /** Told when an actor's record is refused for good (not JSON, or the store's InvalidActorRecordError). */
  onRefused: (entry: Entry, error: unknown) => void;
  timers: RuntimeTimers;
  warn: (message: string) => void;
}

/**
 * Writes changed actors' records, one batch per burst, each actor's `lastWrite` the write holding its
 * latest. A failed write is retried until it lands (answers and effects wait for it), with the record
 * as it is then: the failed one could overwrite a newer one.
 */
export class SnapshotWriter {
  private readonly dirty = new Set<Entry>();
  /** Records put again as they were: a finished actor's last one, or one no longer hosted. */
  private readonly again = new Map<string, { entry: Entry; record: ActorRecord }>();
  /** Each actor entry's latest failed record. */
  private readonly failed = new Map<Entry, { entry: Entry; record: ActorRecord }>();
  /** Batches queued and not yet settled. */
  private inFlight = 0;
  /** Settles once every batch queued so far has: one link per batch, so waiting costs the same at any load. */
  private allQueued: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Consecutive failed write rounds, for the backoff. */
  private failures = 0;
  /** The wait before the retry round: every write failing meanwhile joins it, so one round retries all. */
  private wait: { waited: Promise<void>; end: () => void } | undefined;

  constructor(private readonly o: SnapshotWriterOptions) {}

  /** Writes the actor's record with the next batch (a microtask from now, or the next flush()). */
  mark(entry: Entry): void {
    if (this.o.stopped()) return;
    this.dirty.add(entry);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Records marked or queued again, and batches not yet durable. */
  get pending(): number {
    return this.dirty.size + this.again.size + this.inFlight;
  }

  /** Queues every marked actor's record now, as one batch. */
  flush(): void {
    this.scheduled = false;
    const store = this.o.store();
    if (store === undefined || this.o.stopped()) return;
    // Records put again were told of when first queued.
    const batch = [...this.again.values()].map((retry) => ({ ...retry, repeat: true }));
    this.again.clear();
    for (const entry of this.dirty) {
      if (!this.o.hosted(entry)) continue;
      let record: ActorRecord;
      try {
        record = this.o.recordOf(entry);
      } catch (error) {
        entry.lastWrite = Promise.reject(error);
        entry.lastWrite.catch(() => undefined);
        this.o.onRefused(entry, error);
        continue;
      }
      batch.push({ entry, record, repeat: false });
    }
    this.dirty.clear();
    if (batch.length === 0) return;
    const write = store.put(batch.map(({ record }) => record));
    for (const { entry, record } of batch) {
      // One record the store refuses must not hold the others back: each is then put on its own.
      const own =
        batch.length === 1
          ? write
          : write.catch((error: unknown) =>
              error instanceof InvalidActorRecordError ? store.put([record]) : Promise.reject(error),
            );
      entry.lastWrite = this.landed(own, entry, record);
    }
    // One promise per batch, for settled(): each actor's lastWrite follows its retries until it lands.
    this.track(Promise.allSettled(batch.map(({ entry }) => entry.lastWrite)).then(() => undefined));
    for (const { entry, record, repeat } of batch) {
      // Told once the write that holds it is the actor's lastWrite: a caller told waits for this one.
      if (!repeat) this.o.onQueued(entry, record);
    }
  }

  /** Resolves once every write queued so far has landed or failed for good. */
  settled(): Promise<void> {
    this.flush();
    return this.inFlight === 0 ? Promise.resolve() : this.allQueued;
  }

  /** Resolves once the retry round is queued: after 100 ms, doubling up to 5 s, back to 100 ms on success. */
  private backoff(error: unknown): Promise<void> {
    if (this.wait !== undefined) return this.wait.waited;
    const delayMs = Math.min(5_000, 100 * 2 ** Math.min(this.failures, 6));
    this.failures += 1;
    this.o.warn(
      `snapshots could not be written (${displayText(error)}); retrying in ${delayMs} ms, answers wait`,
    );
    let resolveWait = (): void => {};
    const waited = new Promise<void>((resolve) => (resolveWait = resolve));
    const handle = this.o.timers.setTimeout(() => this.stopRetrying(), delayMs);
    const end = () => {
      this.o.timers.clearTimeout(handle);
      this.retryFailed();
      resolveWait();
    };
    this.wait = { waited, end };
    return waited;
  }

  /** Ends the retry wait now: its time is up, or the host stops (a waiting write fails, its waiters hear why). */
  stopRetrying(): void {
    const wait = this.wait;
    this.wait = undefined;
    wait?.end();
  }

  private landed(write: Promise<void>, entry: Entry, record: ActorRecord): Promise<void> {
    const own: Promise<void> = write.then(
      () => {
        entry.stored = true;
        this.failures = 0;
      },
      async (error: unknown) => {
        if (error instanceof InvalidActorRecordError) {
          this.o.onRefused(entry, error);
          throw error;
        }
        if (this.o.stopped()) throw error;
        this.failed.set(entry, { entry, record });
        await this.backoff(error);
        // The retry round gave the actor a new write (or a newer change did): its answer is that one's.
        if (this.o.stopped() || entry.lastWrite === own) throw error;
        return entry.lastWrite;
      },
    );
    // Answers and side effects wait on lastWrite; an actor nobody waits on must not leave a rejection behind.
    own.catch(() => undefined);
    return own;
  }

  /**
   * Puts each failed actor's record again: a live actor's as it is now, from the entry that hosts it now
   * (a dormant one is hosted again), since the failed record may be older than one written since. A
   * finished actor's, or one no longer here, as it was. Callers waiting on a failed write wait on the new one.
   */
  private retryFailed(): void {
    if (this.o.stopped()) return;
    const failures = [...this.failed.values()];
    this.failed.clear();
    const now = new Map<Entry, Entry>();
    for (const failure of failures) {
      const current = failure.record.status === "active" ? this.o.current(failure.entry) : undefined;
      if (current === undefined) this.again.set(failure.entry.id, failure);
      else {
        this.dirty.add(current);
        now.set(failure.entry, current);
      }
    }
    this.flush();
    for (const [was, current] of now) was.lastWrite = current.lastWrite;
  }

  /** `write` never rejects: it settles once each record of its batch has landed or failed for good. */
  private track(write: Promise<void>): void {
    this.inFlight += 1;
    const settled = () => {
      this.inFlight -= 1;
    };
    void write.then(settled);
    this.allQueued = this.allQueued.then(() => write);
  }
}
