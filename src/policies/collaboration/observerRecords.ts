import { asText, cutText, requireObject } from "../InvalidInputError.js";
import type { InboundDiscordMessage } from "./InboundDiscordMessage.js";

export interface ObserverTokens {
  mentions: string[];
  urls: string[];
  prNumbers: string[];
  codeRefs: string[];
}

/** The compact record an observing bot keeps of a message it does not handle. */
export interface ObserverRecord {
  messageId: string;
  sender: string;
  summary: string;
  ts: number;
  channelId: string;
  threadId?: string;
  mentionedBots?: string[];
  extractedTokens: ObserverTokens;
}

/** How much of the message an observer record keeps: a plain cut, not an LLM summary. */
export const OBSERVER_SUMMARY_LENGTH = 50;

const WORD = "\\p{L}\\p{N}_";
// `<@id>` / `<@!id>` user mentions, or `@name` not preceded by a word character (so not e-mail).
const MENTION = new RegExp(`<@!?(\\d+)>|(?<![${WORD}.+\\-@])@([${WORD}](?:[${WORD}.\\-]*[${WORD}])?)`, "gu");
const URL = /https?:\/\/[^\s<>"'`]+/giu;
const URL_TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/u;
// `#123` standing alone: not `<#123>` (a channel), not glued to a word; URLs are masked beforehand.
const PR_NUMBER = /(?<![\p{L}\p{N}_<#&/])#(\d+)(?![\p{L}\p{N}_])/gu;
const BACKTICKED = /`([^`\n]+)`/gu;
// A path with a slash and an extension (`src/a/b.ts`, optionally `:42`), or `b.ts:42`.
const PATH =
  /(?<![\w./-])(?:(?:[\w.-]+\/)+[\w-][\w.-]*\.[A-Za-z]\w*(?::\d+)?|[\w-]+(?:\.[\w-]+)*\.[A-Za-z]\w*:\d+)/gu;
const CALL = /(?<![\w$.])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(\)/gu;

/** The tokens a 50-character summary would lose: mentions, links, PR numbers and code references. */
export function extractObserverTokens(text: string): ObserverTokens {
  const source = asText(text) ?? "";
  const urls: string[] = [];
  const withoutUrls = source.replace(URL, (url) => {
    urls.push(url.replace(URL_TRAILING_PUNCTUATION, ""));
    return " ".repeat(url.length);
  });
  const mentions = [...withoutUrls.matchAll(MENTION)].map((m) => (m[1] ?? m[2]) as string);
  const prNumbers = [...withoutUrls.matchAll(PR_NUMBER)].map((m) => `#${m[1]}`);
  const codeRefs = [
    ...[...withoutUrls.matchAll(BACKTICKED)].map((m) => ({ at: m.index, ref: (m[1] as string).trim() })),
    ...[...withoutUrls.matchAll(PATH)].map((m) => ({ at: m.index, ref: m[0] })),
    ...[...withoutUrls.matchAll(CALL)].map((m) => ({ at: m.index, ref: m[0] })),
  ]
    .filter((c) => c.ref !== "")
    .sort((a, b) => a.at - b.at)
    .map((c) => c.ref);
  return {
    mentions: unique(mentions),
    urls: unique(urls),
    prNumbers: unique(prNumbers),
    codeRefs: unique(codeRefs),
  };
}

/** A message's compact observer record; `mentionedBots` is narrowed to `botUserIds` when given. */
export function toObserverRecord(
  m: InboundDiscordMessage,
  senderName: string,
  options: { botUserIds?: Iterable<string> } = {},
): ObserverRecord {
  requireObject("toObserverRecord", "m", m);
  const content = asText(m.content) ?? "";
  const bots = options.botUserIds === undefined ? undefined : new Set(options.botUserIds);
  const mentioned = (Array.isArray(m.mentionUserIds) ? m.mentionUserIds : []).filter(
    (id) => bots === undefined || bots.has(id),
  );
  const threadId = m.threadId;
  return {
    messageId: m.messageId,
    sender: asText(senderName) || m.authorId,
    summary: cutText(content, OBSERVER_SUMMARY_LENGTH),
    ts: m.ts,
    channelId: m.channelId,
    ...(threadId === undefined ? {} : { threadId }),
    ...(mentioned.length === 0 ? {} : { mentionedBots: unique(mentioned) }),
    extractedTokens: extractObserverTokens(content),
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
