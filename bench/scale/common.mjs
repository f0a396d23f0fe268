// What the populating and the measured process share: the gateway's config, the clock's origin, and a
// tiny DiscordPort. Plain ESM, run by plain `node` on the built dist/.

export const MENTION_TIMEOUT_MS = 300_000;
/** The measured drive starts here: the first live mention falls due at FIRST_DUE. */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
export const FIRST_DUE = T0 + MENTION_TIMEOUT_MS;
/** Live mention i is sent at T0 + i × SEND_SPACING_MS: one falls due every 2 ms, ~1,000 transitions/s. */
export const SEND_SPACING_MS = 2;
/** A month of finished collaborations is kept: the archive is pruned after this age. */
export const CLEANUP_MAX_AGE_MS = 31 * 86_400_000;
/** Finished collaborations are spread over the 30 days before T0. */
export const ARCHIVE_DAYS = 30;

export const CHANNEL = "1400000000000000500";
export const HUMAN = "1400000000000000900";
export const AGENTS = Array.from({ length: 12 }, (_, i) => `agent${String(i).padStart(2, "0")}`);
export const BOT_IDS = Object.fromEntries(
  AGENTS.map((id, i) => [id, String(1_400_000_000_000_000_200n + BigInt(i))]),
);
/** 12 agents: 132 ordered pairs. */
export const PAIRS = AGENTS.flatMap((from) => AGENTS.filter((to) => to !== from).map((to) => [from, to]));

export const config = {
  agents: Object.fromEntries(AGENTS.map((id) => [id, { discordBotId: BOT_IDS[id], name: id }])),
  discord: {
    a2aRetry: {
      escalationMentionId: HUMAN,
      responseTimeoutMs: MENTION_TIMEOUT_MS,
      cleanupMaxAgeMs: CLEANUP_MAX_AGE_MS,
    },
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      // Nothing may be rejected or queued: every collaboration opens a thread in one channel.
      loopGuard: { maxCollaboratePerPair: 1_000_000_000 },
      rateLimit: { threadCreationPerMinute: 1_000_000_000, messagePerChannelPerSecond: 1_000_000 },
    },
  },
};

/**
 * The smallest DiscordPort: ids from a counter, a nonce posts once, threads know their parent. A
 * gateway's real port (discord.js) is outside what is measured.
 */
export class CountingDiscord {
  constructor(firstId = 1_400_000_000_000_000_000n) {
    this.id = firstId;
    this.byNonce = new Map();
    this.parents = new Map();
    this.sent = 0;
  }
  nextId() {
    this.id += 1n;
    return this.id.toString();
  }
  async sendMessage(p) {
    const key = `${p.asAgentId}\u0000${p.nonce}`;
    const first = this.byNonce.get(key);
    if (first !== undefined) return { messageId: first };
    const messageId = this.nextId();
    this.byNonce.set(key, messageId);
    this.sent++;
    return { messageId };
  }
  async createThread(p) {
    const threadId = p.fromMessageId ?? this.nextId();
    this.parents.set(threadId, p.channelId);
    return { threadId };
  }
  async describeChannel(p) {
    const parent = this.parents.get(p.channelId);
    if (parent !== undefined) return { channelId: p.channelId, parentChannelId: parent, isThread: true };
    if (p.channelId === CHANNEL) return { channelId: CHANNEL, isThread: false };
    throw Object.assign(new Error("Unknown Channel"), { status: 404, code: 10003 });
  }
}
