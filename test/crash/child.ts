// The crash-test child: a gateway process that the parent (crash.test.ts) SIGKILLs at random moments.
//
//   node --import tsx test/crash/child.ts <stateDir> <discordFile> <seed>
//
// Protocol (one JSON object per line). stdout: {"loaded"} once the modules are loaded; the child
// then waits for {"go":"load"|"idle"} on stdin (so the parent can load the next child while this one
// runs), prints {"starting"}, starts the runtime, prints {"ready"}; in "load" mode it keeps sending
// and answering and prints {"ack"} / {"answered"} only once the record is durably on disk;
// SIGTERM stops the runtime and prints {"stopped"}. stderr: {"warning": message} per runtime warning.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { DEFAULT_SHARDS, JOURNAL_HEADER, shardOf } from "../../src/persistence/index.js";
import { createA2ARuntime } from "../../src/runtime/index.js";
import { DurableDiscord } from "./durableDiscord.js";
import { seededRandom } from "../support/seededRandom.js";
import { textLogger } from "../../src/runtime/logger.js";

export const BOTS = {
  ruda: "1400000000000000101",
  eden: "1400000000000000102",
  seum: "1400000000000000103",
};
export const HUMAN = "1400000000000000900";
export const CHANNEL = "1400000000000000500";

export const RESPONSE_TIMEOUT_MS = 300;
export const URGENT_RESPONSE_TIMEOUT_MS = 100;
export const MAX_ATTEMPTS = 3;

export const crashConfig = {
  agents: {
    ruda: { discordBotId: BOTS.ruda, name: "루다" },
    eden: { discordBotId: BOTS.eden, name: "이든" },
    seum: { discordBotId: BOTS.seum, name: "세움" },
  },
  discord: {
    a2aRetry: {
      responseTimeoutMs: RESPONSE_TIMEOUT_MS,
      urgentResponseTimeoutMs: URGENT_RESPONSE_TIMEOUT_MS,
      maxAttempts: MAX_ATTEMPTS,
      escalationMentionId: HUMAN,
    },
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      // The child sends far faster than agents do: the guards would only turn sends into rejections.
      loopGuard: { maxCollaboratePerPair: 100_000, maxMessagesPerThread: 100_000 },
      rateLimit: { threadCreationPerMinute: 100_000, messagePerChannelPerSecond: 100_000 },
    },
  },
};

// ---- reading the state directory as the LowdbSnapshotStore lays it out (read-only, no lock) ----

/** An actor record as stored in `actors/shard-NN.ndjson` or `archive/archive-<day>T<hour>.ndjson`. */
export interface DiskRecord {
  id: string;
  machineId: string;
  status: "active" | "done" | "error";
  updatedAt: number;
  timers: Array<{ event: string; dueAt: number }>;
  delayed?: Array<{ dueAt: number }>;
  snapshot: { value?: unknown; status?: string; context?: { message?: string } };
  meta?: {
    threadId?: string;
    sentAt?: number;
    mention?: { status: string; attempts: number };
  };
  /** The file the winning copy was read from. */
  file: string;
}

const SHARD_FILE = /^shard-\d+\.ndjson$/;
const JOURNAL_FILE = /^journal-(\d+)\.ndjson$/;
const ARCHIVE_FILE = /^archive-\d{4}-\d{2}-\d{2}T\d{2}\.ndjson$/;

/** Parsed files by path, reused while the file is the same (inode, mtime, size): renames make new inodes. */
export type ParsedFileCache = Map<string, { key: string; records: Record<string, Omit<DiskRecord, "file">> }>;

/**
 * Every record's current copy. A record moving between files (finished → archive) stays in the old
 * file until the new one is on disk, so two copies may exist: the later updatedAt wins, on a tie the
 * finished one — the rule LowdbSnapshotStore.open applies. `ids` limits the shard files read to theirs.
 * The journal (`actors/journal-<n>.ndjson`, what put() appends before the shards catch up) is read
 * first and replayed over the files as LowdbSnapshotStore.open does: its last line per id wins unless a
 * file holds a newer copy; a torn last line (an append cut short) is skipped.
 */
export function readActorRecords(
  stateDir: string,
  options: { ids?: readonly string[]; cache?: ParsedFileCache } = {},
): Map<string, DiskRecord> {
  const files: string[] = [];
  const actorsDir = join(stateDir, "actors");
  const journal = readJournal(actorsDir);
  const archiveDir = join(stateDir, "archive");
  if (options.ids === undefined) {
    for (const name of listDir(actorsDir)) if (SHARD_FILE.test(name)) files.push(join(actorsDir, name));
  } else {
    const digits = Math.max(2, String(DEFAULT_SHARDS - 1).length);
    for (const shard of new Set(options.ids.map((id) => shardOf(id, DEFAULT_SHARDS)))) {
      files.push(join(actorsDir, `shard-${String(shard).padStart(digits, "0")}.ndjson`));
    }
  }
  for (const name of listDir(archiveDir)) if (ARCHIVE_FILE.test(name)) files.push(join(archiveDir, name));

  const winners = new Map<string, DiskRecord>();
  for (const file of files) {
    const records = readRecords(file, options.cache);
    for (const [id, record] of Object.entries(records ?? {})) {
      const candidate: DiskRecord = { ...record, file };
      const known = winners.get(id);
      if (known === undefined || newer(candidate, known)) winners.set(id, candidate);
    }
  }
  for (const [id, candidate] of journal) {
    const known = winners.get(id);
    if (known === undefined || !newer(known, candidate)) winners.set(id, candidate);
  }
  return winners;
}

/** The journal segments in order: the last complete line per id. */
function readJournal(actorsDir: string): Map<string, DiskRecord> {
  const segments = listDir(actorsDir)
    .map((name) => ({ name, seq: Number(JOURNAL_FILE.exec(name)?.[1] ?? NaN) }))
    .filter((s) => !Number.isNaN(s.seq))
    .sort((a, b) => a.seq - b.seq);
  const latest = new Map<string, DiskRecord>();
  for (const { name } of segments) {
    const file = join(actorsDir, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") continue; // folded into the files meanwhile
      throw error;
    }
    // Format 2 segments end in zero padding (src/persistence/journal/segmentFormat.ts): the data ends at the first zero.
    const zero = text.indexOf("\0");
    const lines = (zero < 0 ? text : text.slice(0, zero)).split("\n");
    lines.pop(); // "" after the last newline, or a torn line
    for (const line of lines) {
      if (line === "" || line === JOURNAL_HEADER.trimEnd()) continue;
      const record = parseStoredLine(line) as Omit<DiskRecord, "file">;
      latest.set(record.id, { ...record, file });
    }
  }
  return latest;
}

function readRecords(file: string, cache: ParsedFileCache | undefined) {
  let key = "";
  let text: string;
  try {
    if (cache !== undefined) {
      const s = statSync(file, { bigint: true });
      key = `${s.ino}:${s.mtimeNs}:${s.size}`;
      const hit = cache.get(file);
      if (hit?.key === key) return hit.records;
    }
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
  const records: Record<string, Omit<DiskRecord, "file">> = {};
  // A live shard: a header line, then one record per line, written whole. An archive hour: appended
  // lines, where a torn last line (an append cut short) is skipped.
  const lines = text.split("\n");
  lines.pop();
  if (SHARD_FILE.test(basename(file))) lines.shift();
  for (const line of lines) {
    if (line === "") continue;
    const record = parseStoredLine(line) as Omit<DiskRecord, "file">;
    const known = records[record.id];
    if (known === undefined || !newer({ ...known, file }, { ...record, file })) records[record.id] = record;
  }
  cache?.set(file, { key, records });
  return records;
}

/**
 * A record's line as the store writes it, read here on its own: JSON, or three tab-separated JSON parts,
 * the record without its snapshot, the snapshot's outline (checked to be the snapshot without its
 * contexts) and the snapshot.
 * @throws SyntaxError when it is neither.
 */
export function parseStoredLine(line: string): unknown {
  const parts = line.split("\t");
  if (parts.length === 1) return JSON.parse(line);
  if (parts.length !== 3) throw new SyntaxError(`${parts.length} tab-separated parts, not 3`);
  const [record, outline, snapshot] = parts.map((part) => JSON.parse(part) as unknown);
  if (JSON.stringify(outline) !== JSON.stringify(withoutContexts(snapshot)))
    throw new SyntaxError("the outline is not the snapshot without its contexts");
  return { ...(record as object), snapshot };
}

function withoutContexts(snapshot: unknown): unknown {
  if (typeof snapshot !== "object" || snapshot === null) return snapshot;
  const { context: _context, children, ...rest } = snapshot as Record<string, unknown>;
  if (children === undefined) return rest;
  const outlined = Object.entries(children as Record<string, { snapshot: unknown }>).map(([id, child]) => [
    id,
    { ...child, snapshot: withoutContexts(child.snapshot) },
  ]);
  return { ...rest, children: Object.fromEntries(outlined) };
}

function newer(a: DiskRecord, b: DiskRecord): boolean {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt;
  return a.status !== "active" && b.status === "active";
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return [];
    throw error;
  }
}

/** The mention was posted and that is on disk. */
export function isSent(r: DiskRecord): boolean {
  return r.meta?.sentAt !== undefined && r.meta.threadId !== undefined;
}

/** The collaboration ended (responded, escalated, …) and that is on disk. */
export function isFinished(r: DiskRecord): boolean {
  return r.status !== "active";
}

// ---- the child program ----

function print(line: Record<string, unknown>): void {
  // Synchronous for pipes on Linux: once this returns, the line is in the pipe even if SIGKILL follows.
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the record on disk satisfies `test`: the child reads the files the LowdbSnapshotStore
 * renames into place, and what it finds there survives SIGKILL. discordSend promises durability of
 * the send, but handleDiscordMessage promises none for the response it records, and A2ARuntime has
 * no flush(), so acks are confirmed here rather than taken on trust. All waiters share one poll.
 */
function durability(stateDir: string) {
  const waiting: Array<{ id: string; test: (r: DiskRecord) => boolean; resolve: (r: DiskRecord) => void }> =
    [];
  const cache: ParsedFileCache = new Map();
  let polling = false;
  async function poll() {
    polling = true;
    while (waiting.length > 0) {
      await sleep(5);
      const records = readActorRecords(stateDir, { ids: waiting.map((w) => w.id), cache });
      for (const w of [...waiting]) {
        const record = records.get(w.id);
        if (record !== undefined && w.test(record)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(record);
        }
      }
    }
    polling = false;
  }
  return (id: string, test: (r: DiskRecord) => boolean) =>
    new Promise<DiskRecord>((resolve) => {
      waiting.push({ id, test, resolve });
      if (!polling) void poll();
    });
}

async function main(): Promise<void> {
  const [stateDir, discordFile, seedText] = process.argv.slice(2);
  if (stateDir === undefined || discordFile === undefined) {
    throw new Error("usage: child.ts <stateDir> <discordFile> [seed]");
  }
  const random = seededRandom(Number(seedText ?? 1));
  print({ loaded: process.pid });

  const input = createInterface({ input: process.stdin });
  const go = await new Promise<string>((resolve) => input.once("line", resolve));
  input.close();
  const mode = (JSON.parse(go) as { go: "load" | "idle" }).go;

  const discord = new DurableDiscord(discordFile);
  const runtime = createA2ARuntime({
    stateDir,
    discord,
    config: crashConfig,
    logger: textLogger((message) => process.stderr.write(`${JSON.stringify({ warning: message })}\n`)),
  });
  let stopping = false;
  process.on("SIGTERM", () => {
    stopping = true;
    runtime.stop().then(
      () => {
        discord.close();
        print({ stopped: process.pid, nonceHits: discord.nonceHits });
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
  // Idle: nothing else may keep the process alive once every mention has ended; SIGTERM ends it.
  setInterval(() => undefined, 1 << 30);

  print({ starting: process.pid });
  await runtime.start();
  print({ ready: process.pid });
  if (mode !== "load") return;

  const durable = durability(stateDir);
  const open: Array<{ id: string; threadId: string }> = [];
  for (let n = 1; !stopping; n++) {
    const topicId = `t${process.pid}-${n}`;
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: `작업 ${topicId} 확인 부탁해요`,
      // A topic of its own: a new thread per mention, so a thread's posts belong to one mention.
      topicId,
      urgent: random() < 0.2,
    });
    if (stopping) break;
    if (sent.status !== "sent") {
      print({ rejected: sent.error });
    } else {
      const { mentionId, threadId } = sent;
      const resolvedAt = performance.now();
      // discordSend answers once the snapshot showing the send is on disk: read it back at once.
      const atResolve = readActorRecords(stateDir, { ids: [mentionId] }).get(mentionId);
      const onDiskAtResolve = atResolve !== undefined && isSent(atResolve);
      void durable(mentionId, isSent).then(() => {
        // The ack itself never relies on that: it is printed only once the record was seen on disk.
        print({
          ack: mentionId,
          threadId,
          status: "sent",
          onDiskAtResolve,
          durableMs: Math.round(performance.now() - resolvedAt),
        });
        open.push({ id: mentionId, threadId });
      });
    }
    if (open.length > 0 && random() < 0.4) {
      const [answer] = open.splice(Math.floor(random() * open.length), 1);
      if (answer !== undefined) {
        await runtime.handleDiscordMessage({
          // A Discord id made now (the runtime refuses any other, and orders an answer after its mention
          // by it), unique per process and answer.
          messageId: (
            ((BigInt(Date.now()) - 1_420_070_400_000n) << 22n) |
            (BigInt(process.pid & 0x3ff) << 12n) |
            BigInt(n & 0xfff)
          ).toString(),
          channelId: answer.threadId,
          threadId: answer.threadId,
          parentChannelId: CHANNEL,
          authorId: BOTS.eden,
          authorIsBot: true,
          // eden answers and loops in seum. Answering ruda instead would make ruda the agent handling
          // eden's message, and ruda's next discord_send to eden would be refused as reply_in_thread
          // for 10 minutes: the load would stop after the first answer.
          content: `<@${BOTS.seum}> 확인했어요, 반영할게요`,
          mentionUserIds: [BOTS.seum],
          ts: Date.now(),
        });
        // Responded, or escalated already before the answer came: either way final, and on disk.
        void durable(answer.id, isFinished).then((r) =>
          print({ answered: answer.id, outcome: r.snapshot.value }),
        );
      }
    }
    await sleep(20 + Math.floor(random() * 40));
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
