import { mentionMarkup } from "./discordIds.js";
import { asText, cutText, InvalidInputError } from "../InvalidInputError.js";
import { ko } from "../messages/ko.js";
import { MESSAGE_CATALOGS, renderMessage } from "../messages/messageCatalog.js";
import type { MessageCatalog } from "../messages/messageKeys.js";

/** Discord's limit on a thread name. */
export const MAX_THREAD_NAME_LENGTH = 100;
/** A topic taken from the message is its first non-empty line, cut to this many characters. */
export const MESSAGE_TOPIC_LENGTH = 30;

export interface CollaborationThreadNameParams {
  fromName: string;
  toName: string;
  topic?: string;
  message?: string;
}

/**
 * `[협업] {from} → {to} · {topic}` (in Korean by default), at most 100 characters: the topic is what
 * gets cut. No topic and no message: `[협업] {from} → {to}`.
 */
export function buildCollaborationThreadName(
  p: CollaborationThreadNameParams,
  catalog: MessageCatalog = ko,
): string {
  const names = { from: oneLine(p?.fromName), to: oneLine(p?.toName) };
  const head = cutText(
    renderMessage(catalog, "collaborationThreadNameNoTopic", names),
    MAX_THREAD_NAME_LENGTH,
  );
  const topic = oneLine(p?.topic) || firstLine(p?.message);
  if (!topic) return head;
  // The room left for the topic is what the name takes without it.
  const room =
    MAX_THREAD_NAME_LENGTH -
    renderMessage(catalog, "collaborationThreadName", { ...names, topic: "" }).length;
  if (room <= 0) return head;
  return renderMessage(catalog, "collaborationThreadName", {
    ...names,
    topic: cutText(topic, room).trimEnd(),
  });
}

/**
 * The parent-channel message a new thread is opened from: `🧵` and its name, mention markup as `@id`,
 * so no agent is asked to handle it (the mention itself is posted inside the thread).
 */
export function buildThreadStarterMessage(threadName: string, catalog: MessageCatalog = ko): string {
  return renderMessage(catalog, "threadStarter", { threadName: oneLine(threadName) }).replace(
    mentionMarkup(),
    "$1",
  );
}

/** `[리포트] {eventType} · {ISO time}` (in Korean by default): a sink (report) thread, never handled by agents. */
export function buildReportThreadName(eventType: string, ts: number, catalog: MessageCatalog = ko): string {
  if (typeof ts !== "number" || !Number.isFinite(ts) || Number.isNaN(new Date(ts).getTime())) {
    throw new InvalidInputError("buildReportThreadName", "ts", "an epoch time in milliseconds", ts);
  }
  const name = renderMessage(catalog, "reportThreadName", {
    eventType: oneLine(eventType),
    time: new Date(ts).toISOString(),
  });
  return cutText(name, MAX_THREAD_NAME_LENGTH);
}

/** A report thread: named as a report name begins (before its placeholders) in ko, en or `catalog`. */
export function isReportThreadName(name?: string, catalog?: MessageCatalog): boolean {
  const text = asText(name)?.trimStart();
  if (!text) return false;
  const catalogs =
    catalog === undefined ? Object.values(MESSAGE_CATALOGS) : [...Object.values(MESSAGE_CATALOGS), catalog];
  return catalogs.some((c) => {
    const prefix = reportPrefix(c);
    return prefix !== "" && text.startsWith(prefix);
  });
}

/** The fixed text a report thread's name starts with, or "" when its template starts with a placeholder. */
export function reportPrefix(catalog: Pick<MessageCatalog, "reportThreadName">): string {
  return catalog.reportThreadName.split("{", 1)[0]?.trim() ?? "";
}

function oneLine(text: unknown): string {
  return (asText(text) ?? "").replace(/\s+/g, " ").trim();
}

function firstLine(message: unknown): string {
  const line = (asText(message) ?? "").split(/\r?\n/).find((l) => l.trim() !== "");
  return line === undefined ? "" : cutText(oneLine(line), MESSAGE_TOPIC_LENGTH).trimEnd();
}
