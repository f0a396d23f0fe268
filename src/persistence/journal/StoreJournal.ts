import { rm } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, errorText, syncDirectory } from "../DurableJsonFile.js";
import { SnapshotStoreWriteError } from "../snapshotStoreOptions.js";
import { JournalSegmentWriter } from "./JournalSegmentWriter.js";
import { journalFileName, journalSegments } from "./segmentFormat.js";

/** A journal segment; the file of the one appends go to is created as it becomes that one. */
export interface Segment {
  seq: number;
  path: string;
  writer: JournalSegmentWriter;
}

export interface StoreJournalOptions {
  /** The folder of the segments. */
  actorsDir: string;
  /** The current record of an id as JSON text (what an append writes), or undefined when it is gone. */
  lineOf: (id: string) => string | undefined;
  onWrite: (bytes: number) => void;
  warn: (message: string) => void;
  /** Told after each append: the journal may be due for a fold (or, after EFBIG, must be folded). */
  appended: (segmentBytes: number, mustFold: boolean) => void;
}

/**
 * Runs `work` one run at a time; requests while a run is on share one more run after it. A run starts a
 * microtask after its first request (so what the same tick asks for joins it) and chains on promises,
 * never a timer, so fake timers never stall it. A failed run rejects its callers only, never unhandled.
 */
export class OneAtATime {
  /** The run going on, if any. */
  running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly work: () => Promise<void>) {}

  request(): Promise<void> {
    if (this.next !== undefined) return this.next;
    const run: Promise<void> = (this.running?.catch(() => undefined) ?? Promise.resolve())
      .then(() => {
        this.next = undefined;
        this.running = run;
        return this.work();
      })
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.next = run;
    run.catch(() => undefined);
    return run;
  }

  /** The run queued or going on, if any. */
  get pending(): Promise<void> | undefined {
    return this.next ?? this.running;
  }
}

/**
 * A keyed journal (a LowdbSnapshotStore's, the thread state's): the segment appends go to, the sealed ones a compaction has yet to
 * fold, and the coalesced appends (OneAtATime). A batch is durable or not acknowledged (JournalSegmentWriter).
 */
export class StoreJournal {
  /** Ids put since the last append started: the next append writes their current records. */
  private readonly pending = new Set<string>();
  private readonly batches = new OneAtATime(() => this.runBatch());
  segment: Segment;
  /** Sealed segments whose records are not yet known to be in the files (a compaction failed or is running). */
  readonly sealed: Segment[] = [];
  appends = 0;
  bytes = 0;

  constructor(private readonly o: StoreJournalOptions) {
    this.segment = this.newSegment(1);
  }

  /**
   * Appends go to a new segment after the newest in `names` (the folder's entries), its file created
   * now: its directory sync then runs while the caller reads the folder, not on the first append's path.
   */
  startAfter(names: readonly string[]): void {
    this.segment = this.newSegment((journalSegments(names).at(-1)?.seq ?? 0) + 1);
    this.segment.writer.prepare();
  }

  /** Takes the segments the open read (of the names given to startAfter) as sealed: folded in by the next seal. */
  resume(seqs: readonly number[]): void {
    const last = seqs.at(-1) ?? 0;
    if (last >= this.segment.seq)
      throw new Error(
        `journal segment ${last} was read, but appends go to ${this.segment.seq}: startAfter() was not given its name`,
      );
    for (const seq of seqs) this.sealed.push(this.newSegment(seq));
  }

  /** Closes the segment appends go to; one never appended to is removed (if it can be: left, it reads as empty). */
  async close(): Promise<void> {
    const { writer, path } = this.segment;
    await writer.prepared(); // else its making could end after the removal
    await writer.close();
    if (writer.size === 0) await rm(path, { force: true }).catch(() => undefined);
  }

  /** Queues ids for the next append; resolves once it is durable. */
  add(ids: Iterable<string>): Promise<void> {
    for (const id of ids) this.pending.add(id);
    return this.batches.request();
  }

  /** Resolves once every id added before the call is durable (rejects as its batch did). */
  flush(): Promise<void> | undefined {
    return this.pending.size > 0 ? this.batches.request() : this.batches.pending;
  }

  /** Resolves once no append is queued or writing (a failed one included); starts none itself. */
  async idle(): Promise<void> {
    for (let batch; (batch = this.batches.pending) !== undefined;) await batch.catch(() => undefined);
  }

  /**
   * Seals the current segment (appends go to a new one from now on) and closes it once the append
   * writing to it lands; resolves with every sealed segment, for remove() once their records are safe.
   */
  async seal(prepareNext = true): Promise<Segment[]> {
    const inFlight = this.batches.running;
    const { writer } = this.segment;
    // Nothing to fold in a segment never appended to: appends go on there, its file already made.
    if (writer.size === 0 && !writer.broken && inFlight === undefined) return [...this.sealed];
    const sealed = this.rotate(prepareNext);
    const next = this.segment;
    const all = [...this.sealed];
    await inFlight?.catch(() => undefined);
    await sealed.writer.close().catch(() => undefined);
    // The next segment's name is durable before the caller folds: its directory sync would wait for
    // the fold's writes (a second seen), and every append with it.
    if (prepareNext) await next.writer.prepared();
    return all;
  }

  /** Appends go to a new segment from now on; `prepare`: its file is created now, not on its first append. */
  private rotate(prepare = true): Segment {
    const old = this.segment;
    this.sealed.push(old);
    this.segment = this.newSegment(old.seq + 1);
    if (prepare) this.segment.writer.prepare();
    return old;
  }

  /** Deletes sealed segments now folded into the files; one that cannot be is reported and stays sealed. */
  async remove(segments: readonly Segment[]): Promise<void> {
    let removed = false;
    for (const segment of segments) {
      try {
        await rm(segment.path, { force: true });
      } catch (error) {
        this.o.warn(`could not delete the folded journal ${segment.path}: ${errorText(error)}`);
        continue;
      }
      removed = true;
      const at = this.sealed.indexOf(segment);
      if (at >= 0) this.sealed.splice(at, 1);
    }
    if (removed) await syncDirectory(this.o.actorsDir);
  }

  private newSegment(seq: number): Segment {
    const path = join(this.o.actorsDir, journalFileName(seq));
    return { seq, path, writer: new JournalSegmentWriter(path) };
  }

  /** Appends the current record of every id added since the last append, and fdatasyncs it. */
  private async runBatch(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    let text = "";
    for (const id of ids) {
      const line = this.o.lineOf(id);
      if (line !== undefined) text += `${line}\n`;
    }
    if (text === "") return;
    const segment = this.segment;
    const before = segment.writer.size;
    try {
      await segment.writer.append(Buffer.from(text, "utf8"));
    } catch (error) {
      for (const id of ids) this.pending.add(id);
      // A broken writer left a torn tail, which a later append would make a corrupt middle; a file size
      // limit (EFBIG) refuses every retry here and the shards hold each record once: both go on in a new segment.
      const tooLarge = errorCode(error) === "EFBIG" && segment.writer.size > 0;
      if ((segment.writer.broken || tooLarge) && this.segment === segment) this.rotate();
      if (tooLarge) this.o.appended(segment.writer.size, true);
      const failure = new SnapshotStoreWriteError([{ file: segment.path, cause: error }]);
      this.o.warn(failure.message);
      throw failure;
    }
    const appended = segment.writer.size - before; // the first append also wrote the segment's header
    this.o.onWrite(appended);
    this.appends += 1;
    this.bytes += appended;
    if (this.segment === segment) this.o.appended(segment.writer.size, false);
  }
}
