import { classifyDiscordFailure } from "../policies/index.js";
import type { DiscordPort, RecentDiscordMessage } from "./ports.js";

/** How many of a channel's latest messages are searched for a post made before a crash. */
export const RECENT_MESSAGES_LIMIT = 50;

/** How much earlier than the post's first try a message may be stamped and still be it: clocks differ. */
export const CLOCK_SKEW_MS = 60_000;

/** One post to Discord, as a side effect makes it. */
export interface PostToFind {
  asAgentId: string;
  channelId: string;
  content: string;
  /** The machine's key for this post (the same on every try); `nonce` is Discord's, derived from it. */
  nonceKey: string;
  nonce: string;
}

/**
 * Exactly once beyond Discord's nonce window (`nonceWindowMs`). A post re-run from a restored record
 * began after that record was saved (effects start once their snapshot is durable, and a posting state
 * is saved again only when it is left), so `now - savedAt > nonceWindowMs` never understates its age.
 * Such a re-run, and each retry, first looks in the channel's recent messages for the same bot's post
 * with the same content (and nonce, when given). Within the window nothing is read.
 */
export class EarlierPosts {
  /** Posts re-run after a restart, by nonce key, until one lands: a time at or before their first try. */
  private readonly firstTries = new Map<string, number>();
  /** Set while an actor is being started from a record saved at this time. */
  private restoredFrom: number | undefined;

  constructor(
    private readonly o: {
      discord?: DiscordPort;
      nonceWindowMs: number;
      now: () => number;
      /** The bot user id of an agent: the author its posts carry. */
      botIdOf: (agentId: string) => string | undefined;
      warn: (message: string) => void;
    },
  ) {}

  /** Starts a side effect re-run by an actor restored from a record saved at `savedAt`. */
  restoring<T>(savedAt: number, start: () => T): T {
    const outer = this.restoredFrom;
    this.restoredFrom = savedAt;
    try {
      return start();
    } finally {
      this.restoredFrom = outer;
    }
  }

  /** Call synchronously when a post's effect starts: a re-run's first try is remembered. */
  noteStart(nonceKey: string): void {
    if (this.restoredFrom !== undefined && !this.firstTries.has(nonceKey)) {
      this.firstTries.set(nonceKey, this.restoredFrom);
    }
  }

  /** Makes the post with `send`, unless it is a re-run beyond the window that finds it already made. */
  async postOnce(
    post: PostToFind,
    send: () => Promise<{ messageId: string }>,
  ): Promise<{ messageId: string }> {
    const earlier = await this.find(post);
    const result = earlier === undefined ? await send() : { messageId: earlier };
    this.firstTries.delete(post.nonceKey);
    return result;
  }

  private async find(post: PostToFind): Promise<string | undefined> {
    const firstTry = this.firstTries.get(post.nonceKey);
    if (firstTry === undefined) return undefined;
    const sinceMs = this.o.now() - firstTry;
    if (sinceMs <= this.o.nonceWindowMs) return undefined;
    const uncheckable = (why: string) => {
      this.o.warn(
        `a post to ${post.channelId} (${post.nonceKey}) is re-run ${sinceMs} ms after its first try, past ` +
          `Discord's nonce window, and ${why}, so whether it was already made is unknown: it may appear twice`,
      );
      return undefined;
    };
    const botId = this.o.botIdOf(post.asAgentId);
    const recentMessages = this.o.discord?.recentMessages?.bind(this.o.discord);
    if (botId === undefined) return uncheckable(`agent ${post.asAgentId} has no bot id`);
    if (recentMessages === undefined) return uncheckable("the DiscordPort has no recentMessages");
    let messages: RecentDiscordMessage[];
    try {
      messages = await recentMessages({
        asAgentId: post.asAgentId,
        channelId: post.channelId,
        limit: RECENT_MESSAGES_LIMIT,
      });
    } catch (error) {
      // A read that may work later fails the post, whose retry reads again; one that never will
      // (no Read Message History, say) must not stop the post for good.
      if (classifyDiscordFailure(error).retryable) throw error;
      return uncheckable(
        `its recent messages cannot be read (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    return messages.find((m) => isSamePost(m, post, botId, firstTry - CLOCK_SKEW_MS))?.messageId;
  }
}

/** The same author and content (Discord trims content), the same nonce when given, not older than the post. */
function isSamePost(m: RecentDiscordMessage, post: PostToFind, botId: string, earliest: number): boolean {
  return (
    m.authorId === botId &&
    m.content.trim() === post.content.trim() &&
    (m.nonce === undefined || m.nonce === post.nonce) &&
    (m.createdAt === undefined || m.createdAt >= earliest)
  );
}
