import { mkdir, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import type { BotExchange } from "../policies/collaboration/botExchange.js";
import { displayText } from "../policies/index.js";
import { errorCode, keepInQuarantine, quarantineEntries, quarantineStamp } from "../persistence/index.js";
import { StoreJournal } from "../persistence/journal/StoreJournal.js";
import { type ReplayJournalOptions, replayJournal } from "../persistence/journal/replayJournal.js";
import type { ThreadEntry, ThreadState } from "./ThreadState.js";
import { type BadEntry, checkEntry } from "./threadEntries.js";

/** The thread state on disk: `<stateDir>/threads/journal-<n>.ndjson`, segments as the snapshot store's. */
export const THREAD_STATE_DIR = "threads";
/** Lines a fold waits for at least, besides a quarter of the state it last wrote whole. */
export const FOLD_AT_LINES = 2_000;
/** Entries a fold writes per append: the event loop runs between them. */
const FOLD_PIECE = 10_000;
/** A segment is sealed once it holds this many bytes, so a start reads the journal in pieces. */
const SEGMENT_BYTES = 8 * 1024 * 1024;

/**
 * Keeps the thread state saved in the snapshot store's journal format: each change is appended in the
 * background (coalesced) as an `{c, k, v}` line, `v` left out for a removal. Once the lines appended
 * since the state was last written whole pass a quarter of it (and FOLD_AT_LINES), a fold rewrites it
 * whole, so a start replays a journal bounded by the state's size.
 */
export class ThreadStateStore {
  private readonly journal: StoreJournal;
  /** Lines in the segments, and how many of them the last fold (or the start) counted as the state. */
  private lines = 0;
  private stateLines = 0;
  private folding: Promise<void> | undefined;

  private constructor(
    private readonly threads: ThreadState,
    private readonly dir: string,
    private readonly warn: (message: string) => void,
  ) {
    this.journal = new StoreJournal({
      actorsDir: dir,
      lineOf: (id) => {
        this.lines += 1;
        return JSON.stringify(threads.entry(id));
      },
      onWrite: () => {},
      warn,
      appended: (bytes, mustFold) => {
        // A fold that fails is tried again after the next append: until then, the older segments stay.
        if (mustFold || this.foldDue())
          this.folding ??= this.fold()
            .catch((error: unknown) => this.warn(`could not fold the thread state: ${displayText(error)}`))
            .finally(() => (this.folding = undefined));
        else if (bytes >= SEGMENT_BYTES) void this.journal.seal();
      },
    });
  }

  /**
   * Reads the thread state of `stateDir` into `threads` and keeps it saved. Every entry is validated
   * as it is read: one that fails is kept in `<stateDir>/quarantine/` and reported, and the rest is
   * used; a damaged segment is copied there too. Expired entries are dropped at once.
   */
  static async open(o: {
    stateDir: string;
    threads: ThreadState;
    now: () => number;
    onWarning: (message: string) => void;
  }): Promise<ThreadStateStore> {
    const { stateDir, threads, now, onWarning: warn } = o;
    const dir = join(stateDir, THREAD_STATE_DIR);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const names = await folderNames(dir);
    const store = new ThreadStateStore(threads, dir, warn);
    // The segment appends will go to is made while the journal is read.
    store.journal.startAfter(names);
    try {
      await store.load(stateDir, names, now);
    } catch (error) {
      await store.journal.close().catch(() => undefined);
      throw error;
    }
    threads.onChange = (id) => void store.journal.add([id]);
    return store;
  }

  /** Replays the journal's segments (`names`) into the thread state, sets aside what is bad, and drops what expired. */
  private async load(stateDir: string, names: readonly string[], now: () => number): Promise<void> {
    const { threads, warn } = this;
    const bad: BadEntry[] = [];
    // Damage is written out of the journal at once, so the next start reports it no more.
    let damaged = false;
    const read = await readJournal(this.dir, names, bad, {
      torn: (file) => {
        damaged = true;
        warn(`thread state: ignored the torn last line of ${file} (an append cut short, never acknowledged)`);
      },
      damaged: async (file, bytes, damage) => {
        damaged = true;
        const name = `threads-${basename(file)}.damaged-${quarantineStamp(now())}`;
        const { path } = await keepInQuarantine(stateDir, name, "", bytes);
        warn(
          `thread state: SAVED DATA MAY BE LOST: ${damage.kind} journal ${file}: ${damage.problem}; ` +
            `kept a copy at ${path} and loaded every entry it still holds`,
        );
      },
    });
    threads.load(read.entries);
    if (bad.length > 0) {
      const kept = await quarantineEntries(stateDir, "threads", now(), { entries: bad });
      warn(
        `${bad.length} thread-state entr${bad.length === 1 ? "y is" : "ies are"} invalid; dropped them and kept them in ${kept}`,
      );
    }
    this.journal.resume(read.seqs);
    const expired: string[] = [];
    threads.onChange = (id) => expired.push(id);
    threads.expire(now());
    this.lines = read.lines;
    this.stateLines = threads.size;
    // Much expired (a start after a long stop) is cheaper written whole than logged removal by removal.
    if (damaged || bad.length > 0 || this.foldDue(expired.length)) await this.fold();
    else await this.journal.add(expired);
  }

  /** Resolves once every change made before the call is on disk; rejects if that write failed. */
  async flush(): Promise<void> {
    await this.journal.flush();
  }

  /** Resolves once no save or fold is queued or running (a failed one reported); writes nothing itself. */
  async idle(): Promise<void> {
    for (;;) {
      await this.journal.idle();
      if (this.folding === undefined) return;
      await this.folding;
    }
  }

  /** Saves what waits and closes the files; rejects if that cannot be saved. */
  async close(): Promise<void> {
    this.threads.onChange = () => {};
    try {
      await this.journal.flush();
    } finally {
      await this.folding;
      await this.journal.close();
    }
  }

  /**
   * Writes the whole state into a new segment, piece by piece, then deletes the older segments: until
   * then they hold it all, and a replay reads the newer lines last, so a crash loses nothing.
   */
  async fold(): Promise<void> {
    const older = await this.journal.seal();
    // An entry changed meanwhile is appended again, one removed meanwhile is written as removed.
    const ids = [...this.threads.ids()];
    this.lines = 0;
    this.stateLines = ids.length;
    for (let at = 0; at < ids.length; at += FOLD_PIECE)
      await this.journal.add(ids.slice(at, at + FOLD_PIECE));
    await this.journal.remove(older);
  }

  private foldDue(unwritten = 0): boolean {
    const appended = this.lines + unwritten - this.stateLines;
    return appended >= Math.max(FOLD_AT_LINES, this.stateLines / 4);
  }
}

/**
 * The bot↔bot exchanges of a state directory's thread state, read beside a running runtime: nothing is
 * changed; damage and entries that fail validation are reported through `onWarning` and left out.
 */
export async function readThreadExchanges(
  stateDir: string,
  onWarning: (message: string) => void,
): Promise<Array<{ threadId: string; exchange: BotExchange }>> {
  const bad: BadEntry[] = [];
  let vanished = false;
  const dir = join(stateDir, THREAD_STATE_DIR);
  const { entries } = await readJournal(dir, await folderNames(dir), bad, {
    damaged: (file, _bytes, damage) => onWarning(`${file}: ${damage.kind} journal: ${damage.problem}`),
    unreadable: (file, error) => {
      if (errorCode(error) === "ENOENT") vanished = true;
      else onWarning(`${file}: ${displayText(error)}`);
    },
  });
  // A fold deleted a segment after the listing: what it held is in a newer one, which a new reading lists.
  if (vanished) return readThreadExchanges(stateDir, onWarning);
  for (const entry of bad)
    if (entry.c === "exchange")
      onWarning(`thread state: exchange ${JSON.stringify(entry.k)} is invalid: ${entry.reason}`);
  // The last entry of each thread wins, in the order of those last entries.
  const exchanges = new Map<string, BotExchange>();
  for (const e of entries) {
    if (e.c !== "exchange") continue;
    exchanges.delete(e.k);
    if (e.v !== undefined) exchanges.set(e.k, e.v);
  }
  return [...exchanges].map(([threadId, exchange]) => ({ threadId, exchange }));
}

/**
 * The segments `names` of `dir` replayed: every valid line as an entry, in line order (applied in that order,
 * the last of each key wins), the segments' numbers, and how many lines they hold.
 */
async function readJournal(
  dir: string,
  names: readonly string[],
  bad: BadEntry[],
  reading: Pick<ReplayJournalOptions<ThreadEntry>, "damaged" | "torn" | "unreadable">,
) {
  let lines = 0;
  const entries: ThreadEntry[] = [];
  const { seqs } = await replayJournal<ThreadEntry>({
    actorsDir: dir,
    names,
    check: (_key, line) => {
      lines += 1;
      return checkEntry(line, bad);
    },
    each: (entry) => entries.push(entry),
    ...reading,
  });
  return { entries, seqs, lines };
}

/** The names in `dir`; none when it does not exist (a state dir without thread state yet). */
async function folderNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return [];
    throw error;
  }
}
