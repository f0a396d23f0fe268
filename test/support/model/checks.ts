import type { A2ARuntime } from "../../../src/index.js";
import type { SentMessage } from "../runtimeFakes.js";
import type { Delivery, MentionModel, ModelMention } from "./mentionModel.js";
import { at } from "./settings.js";
import type { TimedDiscord } from "./timedDiscord.js";

type Listed = Awaited<ReturnType<A2ARuntime["mentions"]>>[number];

/** A reminder or escalation found in Discord: which mention it is for (by the quoted request) and what it says. */
interface Post extends Delivery {
  channelId: string;
  key: string;
}

const REMINDER = /^\[리마인더 (\d+)\/\d+\]/;
const ESCALATION = /^⚠️ 응답 없음 \((\d+)회 시도/;

/** The runtime lists every acknowledged mention with the model's status and attempts. */
export function checkMentions(model: MentionModel, listed: Listed[]): void {
  const byId = new Map(listed.map((m) => [m.id, m]));
  for (const expected of model.mentions) {
    const seen = byId.get(expected.id);
    if (seen === undefined) {
      throw new Error(`acknowledged mention ${describe(expected)} is missing from mentions()`);
    }
    if (
      seen.status !== expected.status ||
      seen.attempts !== expected.attempts ||
      seen.threadId !== expected.threadId
    ) {
      throw new Error(
        `mention ${describe(expected)}: expected ${expected.status} with ${expected.attempts} attempt(s) in thread ` +
          `${expected.threadId}, mentions() says ${seen.status} with ${seen.attempts} in thread ${seen.threadId}`,
      );
    }
  }
}

/**
 * Every reminder and escalation in Discord was posted once, and each acknowledged mention has exactly
 * the posts the model owes it, each at the time the model says (none missing, none late, none extra).
 */
export function checkPosts(model: MentionModel, discord: TimedDiscord): void {
  const posts = discord.messages.flatMap((m) => toPost(m, discord));
  const seen = new Map<string, Post>();
  for (const post of posts) {
    if (seen.has(post.key)) throw new Error(`posted twice in ${post.channelId}: ${post.key}`);
    seen.set(post.key, post);
  }
  const nonces = new Set<string>();
  for (const m of discord.messages) {
    const key = `${m.asAgentId}:${m.nonce}`;
    if (nonces.has(key)) throw new Error(`two messages with one nonce (${key}): ${firstLine(m.content)}`);
    nonces.add(key);
  }
  for (const mention of model.mentions) {
    const mine = discord
      .in(mention.threadId)
      .filter((m) => m.content.includes(`"${mention.text}"`))
      .flatMap((m) => toPost(m, discord));
    const got = mine.map(show).join(", ") || "none";
    const want = mention.delivered.map(show).join(", ") || "none";
    if (got !== want) {
      throw new Error(`mention ${describe(mention)}: expected posts [${want}], Discord has [${got}]`);
    }
  }
}

function toPost(m: SentMessage, discord: TimedDiscord): Post[] {
  const line = firstLine(m.content);
  const reminder = REMINDER.exec(line);
  const escalation = ESCALATION.exec(line);
  const match = reminder ?? escalation;
  if (match === null) return [];
  const request = /"(.*)"/.exec(m.content)?.[1] ?? "";
  return [
    {
      kind: reminder === null ? "escalation" : "reminder",
      attempts: Number(match[1]),
      at: discord.timeOf(m.messageId) ?? Number.NaN,
      channelId: m.channelId,
      key: `${m.channelId} ${reminder === null ? "escalation" : `reminder ${match[1]}`} for "${request}"`,
    },
  ];
}

function show(d: Delivery): string {
  return `${d.kind} ${d.attempts} at ${at(d.at)}`;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

function describe(m: ModelMention): string {
  return `${m.id} ("${m.text}" to ${m.targetAgentId}${m.urgent ? ", urgent" : ""}, sent at ${at(m.sentAt)})`;
}
