import { z } from "zod";
import { EXCHANGE_END_REASONS } from "../policies/collaboration/botExchange.js";
import { isPlainObject as isRecord } from "../persistence/index.js";
import { type ThreadEntry, observedKey } from "./ThreadState.js";

/**
 * The thread state's journal lines checked as they are read: each collection's value against its schema,
 * the large collections by hand first.
 */

const Str = z.string().min(1);
const Time = z.number().finite();
const Tokens = z.array(z.string());
/** Each collection's entry value (see ThreadEntry). */
export const ENTRY_SCHEMAS = {
  parent: z.object({ channelId: Str, at: Time }),
  participants: z.object({ agentIds: z.array(Str), seenAt: Time }),
  route: z.object({ threadId: Str, channelId: Str, lastUsedAt: Time }),
  sink: z.literal(true),
  system: Time,
  observed: z.object({
    messageId: Str,
    sender: z.string(),
    summary: z.string(),
    ts: Time,
    channelId: Str,
    threadId: Str.optional(),
    mentionedBots: Tokens.optional(),
    extractedTokens: z.object({ mentions: Tokens, urls: Tokens, prNumbers: Tokens, codeRefs: Tokens }),
  }),
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

export interface BadEntry {
  c?: unknown;
  k?: unknown;
  v: unknown;
  reason: string;
}

/** A journal line as an entry (one without `v`: a removal), or undefined, added to `bad` with the reason. */
export function checkEntry(line: unknown, bad: BadEntry[]): ThreadEntry | undefined {
  if (!isRecord(line) || typeof line.c !== "string" || typeof line.k !== "string") {
    bad.push({ v: line, reason: "not an entry: {c, k, v} with c and k strings" });
    return undefined;
  }
  const { c, k, v } = line;
  if (!Object.hasOwn(ENTRY_SCHEMAS, c)) {
    bad.push({ c, k, v, reason: `unknown collection "${c}"` });
    return undefined;
  }
  if (!("v" in line)) return { c, k } as ThreadEntry;
  const quick = quickEntry(c, k, v);
  if (quick !== undefined) return quick;
  const parsed = ENTRY_SCHEMAS[c as keyof typeof ENTRY_SCHEMAS].safeParse(v);
  if (!parsed.success) bad.push({ c, k, v, reason: issuesOf(parsed.error) });
  else if (c === "observed" && k !== observedKey(parsed.data as { channelId: string; messageId: string }))
    bad.push({ c, k, v, reason: 'the key is not "<channelId> <messageId>" of the record' });
  else return { c, k, v: parsed.data } as ThreadEntry;
  return undefined;
}

/**
 * The large collections' well-formed entries (parents, participants, routes, observer records), checked
 * and rebuilt by hand as their schema would: zod's first pass over a start's tens of thousands of entries
 * took a fifth of the thread state's open. Anything else goes through the schema, which names what is
 * wrong.
 */
export function quickEntry(c: string, k: string, v: unknown): ThreadEntry | undefined {
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
  if (c === "observed") return quickObserved(k, v);
  return undefined;
}

/** An observer record as ENTRY_SCHEMAS.observed keeps it, when it is well-formed and keyed by its ids. */
function quickObserved(k: string, v: Record<string, unknown>): ThreadEntry | undefined {
  const { messageId, sender, summary, ts, channelId, threadId, mentionedBots, extractedTokens: t } = v;
  if (!isId(messageId) || !isId(channelId) || typeof sender !== "string" || typeof summary !== "string")
    return undefined;
  if (!isTime(ts) || k !== observedKey({ channelId, messageId })) return undefined;
  if (
    !(threadId === undefined || isId(threadId)) ||
    !(mentionedBots === undefined || isTokens(mentionedBots))
  )
    return undefined;
  if (
    !isRecord(t) ||
    !isTokens(t.mentions) ||
    !isTokens(t.urls) ||
    !isTokens(t.prNumbers) ||
    !isTokens(t.codeRefs)
  )
    return undefined;
  const extractedTokens = {
    mentions: t.mentions,
    urls: t.urls,
    prNumbers: t.prNumbers,
    codeRefs: t.codeRefs,
  };
  return {
    c: "observed",
    k,
    v: {
      messageId,
      sender,
      summary,
      ts,
      channelId,
      ...(threadId === undefined ? {} : { threadId }),
      ...(mentionedBots === undefined ? {} : { mentionedBots }),
      extractedTokens,
    },
  };
}

const isTokens = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((token) => typeof token === "string");

const isId = (value: unknown): value is string => typeof value === "string" && value !== "";
const isTime = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

function issuesOf(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "value"}: ${i.message}`)
    .join("; ");
}
