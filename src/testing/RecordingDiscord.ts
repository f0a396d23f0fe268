import type { A2ARuntime, DiscordChannelInfo, DiscordPort, PreflightResult } from "../runtime/index.js";

/** A message the runtime posted, with the time of the clock when it was posted. */
export interface RecordedPost {
  messageId: string;
  asAgentId: string;
  channelId: string;
  content: string;
  mentionUserIds: string[];
  nonce: string;
  at: number;
}

/** A thread the runtime opened. */
export interface RecordedThread {
  threadId: string;
  channelId: string;
  name: string;
  asAgentId: string;
  at: number;
}

/** What Discord answers on a rate-limited route, as discord.js reports it: pass it to `failNext`. */
export function discordRateLimit(retryAfterMs: number): Error {
  return Object.assign(new Error("You are being rate limited."), { status: 429, retryAfter: retryAfterMs });
}

/**
 * A {@link DiscordPort} in memory recording every post and thread with its time; as Discord, it dedupes a
 * nonce per author and refuses a second thread on one message. `answer` needs `connect` (createTestRuntime).
 */
export class RecordingDiscord implements DiscordPort {
  readonly posts: RecordedPost[] = [];
  readonly threads: RecordedThread[] = [];
  /** Channels it describes besides the threads it opened (other threads, DMs). */
  readonly channels = new Map<string, DiscordChannelInfo>();
  private readonly failures: unknown[] = [];
  private ids = 1_400_000_000_000_100_000n;
  private now: () => number;
  private runtime: A2ARuntime | undefined;
  private botIdOf: (agentId: string) => string = (agentId) => agentId;

  constructor(o: { now?: () => number } = {}) {
    this.now = o.now ?? Date.now;
  }

  /** Lets `answer` reach `runtime`, stamps with `now`, and names agents' bots by `botIdOf`. */
  connect(o: {
    runtime: A2ARuntime;
    now: () => number;
    botIdOf: (agentId: string) => string | undefined;
  }): void {
    this.runtime = o.runtime;
    this.now = o.now;
    this.botIdOf = (agentId) => o.botIdOf(agentId) ?? agentId;
  }

  /** The next calls (posts and threads) throw these, in order: e.g. `discordRateLimit(30_000)`. */
  failNext(...errors: unknown[]): void {
    this.failures.push(...errors);
  }

  /** Posts made in a channel or thread, oldest first. */
  in(channelId: string): RecordedPost[] {
    return this.posts.filter((p) => p.channelId === channelId);
  }

  async sendMessage(p: Omit<RecordedPost, "messageId" | "at">): Promise<{ messageId: string }> {
    this.throwIfFailing();
    const first = this.posts.find((m) => m.asAgentId === p.asAgentId && m.nonce === p.nonce);
    return { messageId: first?.messageId ?? this.record(p) };
  }

  /** Records a post (its nonce its id when it has none) and returns its id. */
  private record(p: Omit<RecordedPost, "messageId" | "at" | "nonce"> & { nonce?: string }): string {
    const messageId = this.nextId();
    this.posts.push({
      ...p,
      mentionUserIds: [...p.mentionUserIds],
      nonce: p.nonce ?? messageId,
      messageId,
      at: this.now(),
    });
    return messageId;
  }

  async createThread(p: {
    asAgentId: string;
    channelId: string;
    name: string;
    fromMessageId?: string;
  }): Promise<{ threadId: string }> {
    this.throwIfFailing();
    const threadId = p.fromMessageId ?? this.nextId();
    if (this.threads.some((t) => t.threadId === threadId)) {
      throw Object.assign(new Error("A thread has already been created for this message"), {
        status: 400,
        code: 160004,
      });
    }
    this.threads.push({
      threadId,
      channelId: p.channelId,
      name: p.name,
      asAgentId: p.asAgentId,
      at: this.now(),
    });
    return { threadId };
  }

  async describeChannel(p: { channelId: string }): Promise<DiscordChannelInfo> {
    const thread = this.threads.find((t) => t.threadId === p.channelId);
    if (thread !== undefined)
      return { channelId: p.channelId, parentChannelId: thread.channelId, isThread: true };
    const known = this.channels.get(p.channelId);
    if (known !== undefined) return known;
    throw Object.assign(new Error("Unknown Channel"), { status: 404, code: 10003 });
  }

  async recentMessages(p: { asAgentId: string; channelId: string; limit: number }) {
    return this.in(p.channelId)
      .slice(-p.limit)
      .reverse()
      .map((m) => ({
        messageId: m.messageId,
        authorId: this.botIdOf(m.asAgentId),
        content: m.content,
        createdAt: m.at,
      }));
  }

  /**
   * Posts as `asAgentId`'s bot in a mention's thread (mention or thread id), pinging `mentionAgentIds`,
   * and hands it to the runtime as the bridge would; resolves with the runtime's decision.
   */
  async answer(
    mentionOrThreadId: string,
    asAgentId: string,
    content: string,
    mentionAgentIds: string[] = [],
  ): Promise<PreflightResult> {
    const runtime = this.runtime;
    if (runtime === undefined) {
      throw new Error("RecordingDiscord.answer: not connected to a runtime (createTestRuntime connects it)");
    }
    const mention = (await runtime.mentions()).find((m) => m.id === mentionOrThreadId);
    const threadId = mention?.threadId ?? mentionOrThreadId;
    const parent = this.threads.find((t) => t.threadId === threadId)?.channelId;
    if (mention === undefined && parent === undefined) {
      throw new Error(`RecordingDiscord.answer: no mention or thread ${JSON.stringify(mentionOrThreadId)}`);
    }
    const mentionUserIds = mentionAgentIds.map(this.botIdOf);
    const messageId = this.record({ asAgentId, channelId: threadId, content, mentionUserIds });
    return runtime.handleDiscordMessage({
      messageId,
      channelId: threadId,
      threadId,
      ...(parent === undefined ? {} : { parentChannelId: parent }),
      authorId: this.botIdOf(asAgentId),
      authorIsBot: true,
      content,
      mentionUserIds,
      ts: this.now(),
    });
  }

  private nextId(): string {
    this.ids += 1n;
    return this.ids.toString();
  }

  private throwIfFailing(): void {
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
  }
}
