import { type BotExchange, EXCHANGE_END_REASONS } from "../policies/collaboration/botExchange.js";
import { displayText } from "../policies/index.js";
import { join } from "node:path";
import { z } from "zod";
import { ChangeLogFile, type FoldedState, quarantineEntries } from "../persistence/index.js";
import type { ThreadEntry, ThreadState } from "./ThreadState.js";
import { ThreadStateSaver } from "./ThreadStateSaver.js";

/** The thread state on disk: `<stateDir>/threads/` (shard files + changes.ndjson, see ChangeLogFile). */
export const THREAD_STATE_DIR = "threads";
/** The change log is folded into the snapshot once it holds this many bytes, or more (FOLD_SHARE). */
export const COMPACT_AT_BYTES = 256 * 1024;
/**
 * ...or once it holds this share of the snapshot's bytes: a fold rewrites at most the whole snapshot,
 * so this keeps the bytes a fold writes per logged byte constant however large the state grows, and
 * the log a start replays under a quarter of the snapshot.
 */
const FOLD_SHARE = 1 / 4;
/** Entries dropped by the expiry at start beyond which they are folded in rather than logged (~1 MB). */
const FOLD_EXPIRED_AT = 10_000;

export interface ThreadStateStore {
  /** Resolves once every change made before the call is on disk; rejects if that write failed. */
  flush(): Promise<void>;
  /** Resolves once no save is queued or in flight (a failed one has been reported); writes nothing itself. */
  idle(): Promise<void>;
  /** Saves what waits (folding the log if it is due) and closes the files. */
  close(): Promise<void>;
}

/**
 * Opens the thread state of `stateDir` into `threads` and keeps it saved: every change is appended to
 * a log in the background (no caller waits but one that flushes), folded into the snapshot once the
 * log passes COMPACT_AT_BYTES and a quarter of the snapshot.
 * Every entry is validated as it is read; one that fails is kept in `<stateDir>/quarantine/` and
 * reported, and the rest is used. Expired entries are dropped at once (ThreadState.expire).
 */
export async function openThreadStateStore(o: {
  stateDir: string;
  threads: ThreadState;
  now: () => number;
  onWarning: (message: string) => void;
}): Promise<ThreadStateStore> {
  const { stateDir, threads, now, onWarning: warn } = o;
  const { log, state } = await ChangeLogFile.open({
    dir: join(stateDir, THREAD_STATE_DIR),
    now,
    onWarning: warn,
  });
  try {
    const bad: BadEntry[] = [];
    // Checked as they are loaded, with no copy of the state between.
    threads.load(validEntries(candidatesOf(state), bad));
    if (bad.length > 0) {
      const kept = await quarantineEntries(stateDir, "threads", now(), { entries: bad });
      warn(
        `${bad.length} thread-state entr${bad.length === 1 ? "y is" : "ies are"} invalid; dropped them and kept them in ${kept}`,
      );
    }
    threads.expire(now());
    const expired = threads.takeChanges();
    // Entries set aside are rewritten at once. What expire() dropped is logged, unless it is much (a
    // start after a long stop may drop a month of parents): then it goes straight into the shards,
    // which is cheaper than logging it first and keeps every write small.
    if (bad.length > 0) await log.compact(threads.eachEntry());
    else if (expired.length > FOLD_EXPIRED_AT)
      await log.fold(
        threads.eachEntry(),
        expired.map((e) => e.k),
      );
    else await log.append(expired);
    // So that the next start replays a bounded log.
    if (foldDue(log)) await log.fold(threads.eachEntry());
  } catch (error) {
    await log.close();
    throw error;
  }

  const append = async () => {
    const changes = threads.takeChanges();
    try {
      await log.append(changes);
    } catch (error) {
      threads.returnChanges(changes);
      throw error;
    }
  };
  const saver = new ThreadStateSaver({
    write: async () => {
      await append();
      // The changes are durable now: a failed fold is reported but fails no caller, and is tried again later.
      if (foldDue(log))
        await log
          .fold(threads.eachEntry())
          .catch((error: unknown) => warn(`could not fold the thread-state log: ${displayText(error)}`));
    },
    onError: (error) => warn(`could not save the thread state: ${displayText(error)}`),
  });
  threads.onChange = () => saver.change();
  return {
    flush: () => saver.flush(),
    idle: () => saver.idle(),
    async close() {
      threads.onChange = () => {};
      try {
        await saver.stop();
        // What a failed save handed back is tried once more, and a stop that cannot save it rejects.
        await append();
        // The log is durable as it is: a stop folds it only when a save would have.
        if (foldDue(log)) await log.fold(threads.eachEntry());
      } finally {
        await log.close();
      }
    },
  };
}

function foldDue(log: ChangeLogFile): boolean {
  return log.logBytes >= Math.max(COMPACT_AT_BYTES, log.stateBytes * FOLD_SHARE);
}

/**
 * The bot↔bot exchanges of a state directory's thread state, read beside a running runtime: nothing is
 * changed; entries that fail validation are reported through `onWarning` and left out.
 */
export async function readThreadExchanges(
  stateDir: string,
  onWarning: (message: string) => void,
): Promise<Array<{ threadId: string; exchange: BotExchange }>> {
  const state = await ChangeLogFile.read({ dir: join(stateDir, THREAD_STATE_DIR), now: Date.now, onWarning });
  const bad: BadEntry[] = [];
  const good = [
    ...validEntries(candidatesOf(new Map([["exchange", state.get("exchange") ?? new Map()]])), bad),
  ];
  for (const entry of bad)
    onWarning(`thread state: exchange ${JSON.stringify(entry.k)} is invalid: ${entry.reason}`);
  return good.flatMap((e) =>
    e.c === "exchange" && e.v !== undefined ? [{ threadId: e.k, exchange: e.v }] : [],
  );
}

const Str = z.string().min(1);
const Time = z.number().finite();
const Tokens = z.array(z.string());
const ObserverRecordSchema = z.object({
  messageId: Str,
  sender: z.string(),
  summary: z.string(),
  ts: Time,
  channelId: Str,
  threadId: Str.optional(),
  mentionedBots: Tokens.optional(),
  extractedTokens: z.object({ mentions: Tokens, urls: Tokens, prNumbers: Tokens, codeRefs: Tokens }),
});
/** Each collection's entry value (see ThreadEntry). */
const ENTRY_SCHEMAS = {
  parent: z.object({ channelId: Str, at: Time }),
  participants: z.object({ agentIds: z.array(Str), seenAt: Time }),
  route: z.object({ threadId: Str, channelId: Str, lastUsedAt: Time }),
  sink: z.literal(true),
  system: Time,
  observed: ObserverRecordSchema,
  exchange: z.object({
    handled: z.int().min(0),
    limit: z.int().min(1),
    lastText: z.string().optional(),
    endedBy: z.enum(EXCHANGE_END_REASONS).optional(),
    at: Time,
  }),
  conversation: z.object({ conversationId: Str, at: Time }),
  withdrawn: z.literal(true),
} as const;

interface Candidate {
  c: string;
  k: string;
  v: unknown;
}
interface BadEntry extends Candidate {
  reason: string;
}

/** The candidates that pass their schema; the others are added to `bad`, with the reason. */
function* validEntries(candidates: Iterable<Candidate>, bad: BadEntry[]): Generator<ThreadEntry> {
  for (const { c, k, v } of candidates) {
    const quick = quickEntry(c, k, v);
    if (quick !== undefined) {
      yield quick;
      continue;
    }
    if (!Object.hasOwn(ENTRY_SCHEMAS, c)) {
      bad.push({ c, k, v, reason: `unknown collection "${c}"` });
      continue;
    }
    const parsed = ENTRY_SCHEMAS[c as keyof typeof ENTRY_SCHEMAS].safeParse(v);
    if (!parsed.success) bad.push({ c, k, v, reason: issuesOf(parsed.error) });
    else if (c === "observed" && !observedKeyMatches(k, parsed.data)) {
      bad.push({ c, k, v, reason: 'the key is not "<channelId> <messageId>" of the record' });
    } else yield { c, k, v: parsed.data } as ThreadEntry;
  }
}

/**
 * The well-formed entries of the large collections, checked by hand as their schema would (a start
 * reads hundreds of thousands of them, and the schemas cost several times the parse); the value is
 * rebuilt from the known fields, as the schema's parse does. Anything else, and every failure, goes
 * through the schema, which also names what is wrong.
 */
function quickEntry(c: string, k: string, v: unknown): ThreadEntry | undefined {
  if (c === "sink") return v === true ? { c, k, v } : undefined;
  if (c === "system") return isTime(v) ? { c, k, v } : undefined;
  if (!isRecord(v)) return undefined;
  if (c === "parent")
    return isId(v.channelId) && isTime(v.at) ? { c, k, v: { channelId: v.channelId, at: v.at } } : undefined;
  if (c === "participants") {
    const { agentIds, seenAt } = v;
    return Array.isArray(agentIds) && agentIds.every(isId) && isTime(seenAt)
      ? { c, k, v: { agentIds: agentIds as string[], seenAt } }
      : undefined;
  }
  if (c === "route") {
    const { threadId, channelId, lastUsedAt } = v;
    return isId(threadId) && isId(channelId) && isTime(lastUsedAt)
      ? { c, k, v: { threadId, channelId, lastUsedAt } }
      : undefined;
  }
  return undefined;
}

const isId = (value: unknown): value is string => typeof value === "string" && value !== "";
const isTime = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

function observedKeyMatches(key: string, value: unknown): boolean {
  const record = value as z.infer<typeof ObserverRecordSchema>;
  return key === `${record.channelId} ${record.messageId}`;
}

function* candidatesOf(state: FoldedState): Generator<Candidate> {
  for (const [c, entries] of state) for (const [k, v] of entries) yield { c, k, v };
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "value"}: ${i.message}`)
    .join("; ");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
