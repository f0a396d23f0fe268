import { createReadStream } from "node:fs";
import { copyFile, mkdir, readFile, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import {
  type A2AEvent,
  type A2AEventType,
  type EventBus,
  InvalidInputError,
  displayText,
  requireNonEmptyText,
  requireWholeNumber,
} from "../policies/index.js";
import { EVENT_LOG_FILE } from "./EventLog.js";
import { writeFileDurably } from "../persistence/DurableJsonFile.js";
import { freeQuarantineName, quarantineFile } from "../persistence/quarantine.js";

export const CONVERSATION_INDEX_FILE = "a2a-conversation-index.json";

/** The event types that carry a conversation forward. */
export const CONVERSATION_EVENT_TYPES = ["a2a.send", "a2a.response", "a2a.complete"] as const;
export type ConversationEventType = Extract<A2AEventType, (typeof CONVERSATION_EVENT_TYPES)[number]>;

/** One route's latest conversation. */
export interface ConversationIndexEntry {
  conversationId: string;
  /** The `ts` of the event that set it, in ms. */
  timestamp: number;
  lastEventType: ConversationEventType;
  runId?: string;
}

/** The persisted file. */
export interface ConversationIndexFile {
  version: 1;
  updatedAt: number;
  entries: Record<string, ConversationIndexEntry>;
}

export interface ConversationIndexOptions {
  /** The state directory; created when missing. */
  dir: string;
  now?: () => number;
  /** The most routes kept; beyond it the routes with the oldest timestamp are evicted. */
  maxRoutes?: number;
  /**
   * When the index file is absent or corrupt, build it once from coordination-events.ndjson and its
   * rotated files. An existing valid index is never rebuilt.
   */
  rebuildFromLog?: boolean;
  onWarning?: (message: string) => void;
}

interface Slot {
  entry: ConversationIndexEntry;
  /** Which heap node is current for this route; older nodes for it are stale. */
  seq: number;
}

/**
 * routeKey → latest conversationId, fed from the event bus, persisted to
 * `a2a-conversation-index.json`, bounded to `maxRoutes`.
 *
 * The Map below is the whole index, loaded once at open and kept current by observe(), so get() is a
 * Map lookup and never touches the disk. There is no cache in front of a file reader that re-reads
 * the file on every miss: with a bounded index held in memory, such a cache would only duplicate this
 * Map.
 */
export class ConversationIndex {
  private readonly routes = new Map<string, Slot>();
  private readonly byAge = new AgeHeap();
  private readonly detachers = new Set<() => void>();
  private seq = 0;
  private dirty = false;
  private persisting: Promise<void> | undefined;
  private writeError: unknown;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly dir: string,
    private readonly now: () => number,
    private readonly maxRoutes: number,
    private readonly warn: (message: string) => void,
  ) {}

  static async open(options: ConversationIndexOptions): Promise<ConversationIndex> {
    const dir = requireNonEmptyText("ConversationIndex.open", "dir", options.dir);
    const maxRoutes = requireWholeNumber(
      "ConversationIndex.open",
      "maxRoutes",
      options.maxRoutes ?? 10_000,
      1,
    );
    const warn = options.onWarning ?? ((message: string) => console.warn(`a2a-statecharts: ${message}`));
    await mkdir(dir, { recursive: true });
    const index = new ConversationIndex(
      join(dir, CONVERSATION_INDEX_FILE),
      dir,
      options.now ?? Date.now,
      maxRoutes,
      warn,
    );
    const loaded = await index.load();
    if (!loaded && options.rebuildFromLog === true) await index.rebuildFromLog();
    return index;
  }

  /** The latest conversationId of a route, or undefined for a route it does not know. */
  get(routeKey: string): string | undefined {
    if (typeof routeKey !== "string") {
      throw new InvalidInputError("ConversationIndex.get", "routeKey", "a string", routeKey);
    }
    return this.routes.get(routeKey)?.entry.conversationId;
  }

  /** The whole entry (a copy), for diagnostics. */
  getEntry(routeKey: string): ConversationIndexEntry | undefined {
    if (typeof routeKey !== "string") {
      throw new InvalidInputError("ConversationIndex.getEntry", "routeKey", "a string", routeKey);
    }
    const slot = this.routes.get(routeKey);
    return slot === undefined ? undefined : { ...slot.entry };
  }

  get size(): number {
    return this.routes.size;
  }

  /**
   * Applies an event; returns whether it changed the index. Only a2a.send/response/complete with
   * both routeKey and conversationId count; anything else (collaboration events have no routeKey)
   * is skipped silently, and an event older than the route's entry is ignored.
   */
  observe(event: A2AEvent): boolean {
    if (this.closed) throw new Error(`ConversationIndex.observe: ${this.file} is closed`);
    if (typeof event !== "object" || event === null) {
      throw new InvalidInputError("ConversationIndex.observe", "event", "an A2A event object", event);
    }
    const update = toUpdate(event);
    if (update === undefined) return false;
    if (update === "bad-ts") {
      this.warn(`skipped ${event.type} for route ${event.routeKey ?? "?"}: ts is not a finite number`);
      return false;
    }
    if (!this.apply(update.routeKey, update.entry)) return false;
    this.schedulePersist();
    return true;
  }

  /** Keeps the index current from the bus; returns the unsubscribe. close() also detaches. */
  attach(bus: EventBus): () => void {
    const listener = (event: A2AEvent): void => {
      this.observe(event);
    };
    const unsubscribes = CONVERSATION_EVENT_TYPES.map((type) => bus.subscribe(type, listener));
    const detach = (): void => {
      for (const unsubscribe of unsubscribes) unsubscribe();
      this.detachers.delete(detach);
    };
    this.detachers.add(detach);
    return detach;
  }

  /** Waits for pending writes; afterwards every observed change is on disk (fsynced). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.persisting !== undefined) {
        await this.persisting;
        continue;
      }
      if (!this.dirty) return;
      this.writeError = undefined;
      this.schedulePersist();
      await this.persisting;
      if (this.writeError !== undefined) {
        throw new Error(`ConversationIndex: could not write ${this.file}: ${displayText(this.writeError)}`, {
          cause: this.writeError,
        });
      }
    }
  }

  /** Detaches from every bus, flushes, and refuses later observes. Idempotent. */
  async close(): Promise<void> {
    for (const detach of [...this.detachers]) detach();
    await this.flush();
    this.closed = true;
  }

  /** The index as persisted. */
  snapshot(): ConversationIndexFile {
    const entries: Record<string, ConversationIndexEntry> = {};
    for (const [routeKey, slot] of this.routes) {
      // defineProperty, so a route named "__proto__" is an own key like any other.
      Object.defineProperty(entries, routeKey, {
        value: { ...slot.entry },
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { version: 1, updatedAt: this.now(), entries };
  }

  /** Inserts or replaces a route's entry unless the entry held is newer; evicts beyond maxRoutes. */
  private apply(routeKey: string, entry: ConversationIndexEntry): boolean {
    const existing = this.routes.get(routeKey);
    if (existing !== undefined && existing.entry.timestamp > entry.timestamp) return false;
    // A new route older than every route of a full index would be evicted at once.
    if (existing === undefined && this.routes.size >= this.maxRoutes) {
      const oldest = this.oldest();
      if (oldest !== undefined && entry.timestamp < oldest.entry.timestamp) return false;
    }
    this.seq += 1;
    this.routes.set(routeKey, { entry, seq: this.seq });
    this.byAge.push({ timestamp: entry.timestamp, seq: this.seq, routeKey });
    while (this.routes.size > this.maxRoutes) {
      const node = this.byAge.pop();
      if (node === undefined) break;
      if (this.routes.get(node.routeKey)?.seq === node.seq) this.routes.delete(node.routeKey);
    }
    // Stale nodes (routes updated since) pile up in the heap; rebuild it when they dominate.
    if (this.byAge.length > 2 * this.routes.size + 1024) {
      this.byAge.rebuild(
        [...this.routes].map(([key, slot]) => ({
          timestamp: slot.entry.timestamp,
          seq: slot.seq,
          routeKey: key,
        })),
      );
    }
    return true;
  }

  private oldest(): Slot | undefined {
    for (;;) {
      const node = this.byAge.peek();
      if (node === undefined) return undefined;
      const slot = this.routes.get(node.routeKey);
      if (slot?.seq === node.seq) return slot;
      this.byAge.pop();
    }
  }

  private schedulePersist(): void {
    this.dirty = true;
    // A microtask later, so every observe of the current tick lands in the same write.
    this.persisting ??= Promise.resolve().then(() => this.persistLoop());
  }

  private async persistLoop(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        const text = JSON.stringify(this.snapshot());
        try {
          await writeFileDurably(this.file, text);
        } catch (error) {
          // Kept dirty so flush() retries and reports; the in-memory index stays correct meanwhile.
          this.dirty = true;
          this.writeError = error;
          this.warn(`could not write ${this.file}: ${displayText(error)}`);
          return;
        }
      }
    } finally {
      this.persisting = undefined;
    }
  }

  /** Returns whether a usable index file was found. */
  private async load(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === "ENOENT") return false;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      await this.quarantine(`it is not JSON (${displayText(error)})`);
      return false;
    }
    const shapeProblem = describeShapeProblem(parsed);
    if (shapeProblem !== undefined) {
      await this.quarantine(shapeProblem);
      return false;
    }
    const entries = (parsed as { entries: Record<string, unknown> }).entries;
    let invalid = 0;
    let firstInvalid = "";
    for (const [routeKey, raw] of Object.entries(entries)) {
      const entry = toStoredEntry(raw);
      if (entry !== undefined) {
        this.apply(routeKey, entry);
      } else {
        if (invalid === 0) firstInvalid = routeKey;
        invalid += 1;
      }
    }
    if (invalid > 0) {
      // The good entries are used; the file as it was is copied aside so the bad ones are not lost.
      const copy = await freeQuarantineName(this.file, this.now());
      await copyFile(this.file, copy);
      this.warn(
        `${this.file}: skipped ${invalid} invalid entr${invalid === 1 ? "y" : "ies"} ` +
          `(first: ${JSON.stringify(firstInvalid.slice(0, 200))}); the original is kept as ${basename(copy)}`,
      );
      this.schedulePersist();
    }
    return true;
  }

  private async quarantine(reason: string): Promise<void> {
    const target = await quarantineFile(this.file, this.now());
    this.warn(`${this.file} is corrupt: ${reason}; moved it to ${basename(target)} and started empty`);
  }

  /**
   * The one-time rebuild when the index file is absent or corrupt: streams the rotated logs (oldest
   * first) and then the live one line by line, so memory stays flat whatever their size.
   */
  private async rebuildFromLog(): Promise<void> {
    const logs = await listLogFiles(this.dir);
    if (logs.length === 0) return;
    let lines = 0;
    let bad = 0;
    let firstBad = "";
    for (const log of logs) {
      let lineNumber = 0;
      const input = createReadStream(log, { encoding: "utf8" });
      const reader = createInterface({ input, crlfDelay: Infinity });
      try {
        for await (const line of reader) {
          lineNumber += 1;
          if (line.trim() === "") continue;
          lines += 1;
          const update = parseLogLine(line);
          if (update === "bad") {
            if (bad === 0) firstBad = `${basename(log)}:${lineNumber}`;
            bad += 1;
          } else if (update !== undefined) {
            this.apply(update.routeKey, update.entry);
          }
        }
      } finally {
        reader.close();
        input.destroy();
      }
    }
    if (bad > 0) {
      this.warn(
        `rebuilding ${basename(this.file)} from ${logs.map((log) => basename(log)).join(", ")}: ` +
          `skipped ${bad} of ${lines} lines that are not readable events (first at ${firstBad})`,
      );
    }
    this.schedulePersist();
    await this.flush();
  }
}

interface Update {
  routeKey: string;
  entry: ConversationIndexEntry;
}

function parseLogLine(line: string): Update | "bad" | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "bad";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "bad";
  const event = value as Partial<Record<keyof A2AEvent, unknown>>;
  if (typeof event.type !== "string") return "bad";
  const update = toUpdate(event);
  return update === "bad-ts" ? "bad" : update;
}

/** The entry an event sets; undefined when it does not concern the index, "bad-ts" when unusable. */
function toUpdate(event: Partial<Record<keyof A2AEvent, unknown>>): Update | "bad-ts" | undefined {
  const { type, routeKey, conversationId, runId, ts } = event;
  if (type !== "a2a.send" && type !== "a2a.response" && type !== "a2a.complete") return undefined;
  if (typeof routeKey !== "string" || routeKey === "") return undefined;
  if (typeof conversationId !== "string" || conversationId === "") return undefined;
  if (typeof ts !== "number" || !Number.isFinite(ts)) return "bad-ts";
  const entry: ConversationIndexEntry = { conversationId, timestamp: ts, lastEventType: type };
  if (typeof runId === "string") entry.runId = runId;
  return { routeKey, entry };
}

/**
 * A persisted entry checked by hand: at open this runs once per route (10,000 by default), and a
 * schema library's per-object overhead would dominate the cold load.
 */
function toStoredEntry(raw: unknown): ConversationIndexEntry | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { conversationId, timestamp, lastEventType, runId } = raw as Partial<
    Record<keyof ConversationIndexEntry, unknown>
  >;
  if (typeof conversationId !== "string" || conversationId === "") return undefined;
  if (typeof timestamp !== "number" || !Number.isFinite(timestamp)) return undefined;
  if (lastEventType !== "a2a.send" && lastEventType !== "a2a.response" && lastEventType !== "a2a.complete") {
    return undefined;
  }
  if (runId !== undefined && typeof runId !== "string") return undefined;
  const entry: ConversationIndexEntry = { conversationId, timestamp, lastEventType };
  if (runId !== undefined) entry.runId = runId;
  return entry;
}

function describeShapeProblem(parsed: unknown): string | undefined {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return "it is not a JSON object";
  const { version, entries } = parsed as { version?: unknown; entries?: unknown };
  if (version !== 1) return `version is ${displayText(JSON.stringify(version) ?? "missing")}, expected 1`;
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) {
    return "entries is not an object";
  }
  return undefined;
}

/** coordination-events.ndjson.N (highest N = oldest first), then the live file. */
export async function listLogFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  const rotated = names
    .map((name) => ({ name, n: rotationNumber(name) }))
    .filter((file): file is { name: string; n: number } => file.n !== undefined)
    .sort((a, b) => b.n - a.n)
    .map((file) => join(dir, file.name));
  return names.includes(EVENT_LOG_FILE) ? [...rotated, join(dir, EVENT_LOG_FILE)] : rotated;
}

function rotationNumber(name: string): number | undefined {
  if (!name.startsWith(`${EVENT_LOG_FILE}.`)) return undefined;
  const suffix = name.slice(EVENT_LOG_FILE.length + 1);
  return /^[1-9][0-9]{0,5}$/.test(suffix) ? Number(suffix) : undefined;
}

interface AgeNode {
  timestamp: number;
  seq: number;
  routeKey: string;
}

/** A binary min-heap by (timestamp, seq): the oldest route on top, O(log n) push and pop. */
class AgeHeap {
  private nodes: AgeNode[] = [];

  get length(): number {
    return this.nodes.length;
  }

  peek(): AgeNode | undefined {
    return this.nodes[0];
  }

  push(node: AgeNode): void {
    this.nodes.push(node);
    this.up(this.nodes.length - 1);
  }

  pop(): AgeNode | undefined {
    const top = this.nodes[0];
    const last = this.nodes.pop();
    if (top !== undefined && last !== undefined && this.nodes.length > 0) {
      this.nodes[0] = last;
      this.down(0);
    }
    return top;
  }

  rebuild(nodes: AgeNode[]): void {
    this.nodes = nodes;
    for (let i = Math.floor(nodes.length / 2) - 1; i >= 0; i -= 1) this.down(i);
  }

  private up(start: number): void {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(start: number): void {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.nodes.length && this.less(left, smallest)) smallest = left;
      if (right < this.nodes.length && this.less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }

  private less(a: number, b: number): boolean {
    const x = this.nodes[a];
    const y = this.nodes[b];
    if (x === undefined || y === undefined) return false;
    return x.timestamp < y.timestamp || (x.timestamp === y.timestamp && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.nodes[a];
    const y = this.nodes[b];
    if (x === undefined || y === undefined) return;
    this.nodes[a] = y;
    this.nodes[b] = x;
  }
}
