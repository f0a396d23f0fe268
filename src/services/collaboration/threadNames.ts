import { mentionMarkup } from "./discordIds.js";
import { asText, cutText, InvalidInputError } from "../InvalidInputError.js";

/** Discord's limit on a thread name. */
export const MAX_THREAD_NAME_LENGTH = 100;
/** A topic taken from the message is its first non-empty line, cut to this many characters. */
export const MESSAGE_TOPIC_LENGTH = 30;

const COLLABORATION_PREFIX = "[협업]";
const REPORT_PREFIX = "[리포트]";

export interface CollaborationThreadNameParams {
  fromName: string;
  toName: string;
  topic?: string;
  message?: string;
}

/** `[협업] {from} → {to} · {topic}`, at most 100 characters: the topic is what gets cut. */
export function buildCollaborationThreadName(p: CollaborationThreadNameParams): string {
  const head = cutText(
    `${COLLABORATION_PREFIX} ${oneLine(p?.fromName)} → ${oneLine(p?.toName)}`,
    MAX_THREAD_NAME_LENGTH,
  );
  const topic = oneLine(p?.topic) || firstLine(p?.message);
  if (!topic) return head;
  const room = MAX_THREAD_NAME_LENGTH - head.length - " · ".length;
  if (room <= 0) return head;
  return `${head} · ${cutText(topic, room).trimEnd()}`;
}

/**
 * The message a new collaboration thread is opened from, in the parent channel: `🧵` and the thread's
 * name. It pings nobody and carries no mention markup (`<@id>` becomes `@id`), so no agent is asked to
 * handle it; the mention itself is posted inside the thread.
 */
export function buildThreadStarterMessage(threadName: string): string {
  return `🧵 ${oneLine(threadName).replace(mentionMarkup(), "$1")}`;
}

/** `[리포트] {eventType} · {ISO time}`: the name of a sink (report) thread, never handled by agents. */
export function buildReportThreadName(eventType: string, ts: number): string {
  if (typeof ts !== "number" || !Number.isFinite(ts) || Number.isNaN(new Date(ts).getTime())) {
    throw new InvalidInputError("buildReportThreadName", "ts", "an epoch time in milliseconds", ts);
  }
  const name = `${REPORT_PREFIX} ${oneLine(eventType)} · ${new Date(ts).toISOString()}`;
  return cutText(name, MAX_THREAD_NAME_LENGTH);
}

export function isReportThreadName(name?: string): boolean {
  return asText(name)?.trimStart().startsWith(REPORT_PREFIX) ?? false;
}

function oneLine(text: unknown): string {
  return (asText(text) ?? "").replace(/\s+/g, " ").trim();
}

function firstLine(message: unknown): string {
  const line = (asText(message) ?? "").split(/\r?\n/).find((l) => l.trim() !== "");
  return line === undefined ? "" : cutText(oneLine(line), MESSAGE_TOPIC_LENGTH).trimEnd();
}
