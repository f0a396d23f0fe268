import { stoppedAfterEachOnFakeClock } from "./fakeClock.js";
import { type A2ARuntime, createA2ARuntime, type DiscordPort } from "../../src/index.js";
import { type DiscordChannelInfo } from "../../src/runtime/index.js";
import { tempDir } from "./tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

/** A state directory for one test, removed after its file. */
export function tempStateDir(prefix = "a2a-runtime-"): string {
  return tempDir(prefix);
}

export interface SentMessage {
  asAgentId: string;
  channelId: string;
  content: string;
  mentionUserIds: string[];
  nonce: string;
  messageId: string;
}

/**
 * Discord as the runtime sees it, in memory: it records messages and threads, honours `nonce` the
 * way `enforce_nonce` does (the same author and nonce returns the first message; with `nonceWindow`
 * only within that window, as Discord does), and can be told to fail the next calls.
 */
export class FakeDiscord implements DiscordPort {
  readonly messages: SentMessage[] = [];
  readonly threads: Array<{ threadId: string; channelId: string; name: string; asAgentId: string }> = [];
  readonly failures: unknown[] = [];
  /** Every recentMessages call, by channel id. */
  readonly recentCalls: string[] = [];
  private ids = 1_400_000_000_000_000_000n;
  /** When each message was created (by `nonceWindow.now`). */
  private readonly createdAt = new Map<string, number>();

  /** `nonceWindow`: a nonce deduplicates only for `ms` after its message, by `now` (default: forever). */
  constructor(private readonly o: { nonceWindow?: { ms: number; now: () => number } } = {}) {}

  nextId(): string {
    this.ids += 1n;
    return this.ids.toString();
  }

  async sendMessage(p: Omit<SentMessage, "messageId">) {
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    const window = this.o.nonceWindow;
    const first = this.messages.find(
      (m) =>
        m.asAgentId === p.asAgentId &&
        m.nonce === p.nonce &&
        (window === undefined || window.now() - (this.createdAt.get(m.messageId) ?? 0) < window.ms),
    );
    if (first !== undefined) return { messageId: first.messageId };
    const messageId = this.nextId();
    this.messages.push({ ...p, mentionUserIds: [...p.mentionUserIds], messageId });
    if (window !== undefined) this.createdAt.set(messageId, window.now());
    return { messageId };
  }

  /** The latest `limit` messages of a channel, newest first, without nonces (as Discord lists them). */
  async recentMessages(p: { asAgentId: string; channelId: string; limit: number }) {
    this.recentCalls.push(p.channelId);
    return this.in(p.channelId)
      .slice(-p.limit)
      .reverse()
      .map((m) => {
        const createdAt = this.createdAt.get(m.messageId);
        return {
          messageId: m.messageId,
          authorId: (BOTS as Record<string, string | undefined>)[m.asAgentId] ?? m.asAgentId,
          content: m.content,
          ...(createdAt === undefined ? {} : { createdAt }),
        };
      });
  }

  /** A thread opened from a message has the message's id; a second one for it is refused (400 / 160004). */
  async createThread(p: { asAgentId: string; channelId: string; name: string; fromMessageId?: string }) {
    const threadId = p.fromMessageId ?? this.nextId();
    if (this.threads.some((t) => t.threadId === threadId)) {
      throw Object.assign(new Error("A thread has already been created for this message"), {
        status: 400,
        code: 160004,
      });
    }
    this.threads.push({ threadId, channelId: p.channelId, name: p.name, asAgentId: p.asAgentId });
    return { threadId };
  }

  /** Channels Discord knows besides the threads created here (threads opened by others, DMs). */
  readonly channels = new Map<string, DiscordChannelInfo>();
  /** Every describeChannel call, by channel id. */
  readonly describeCalls: string[] = [];

  /** What Discord says of a channel: a thread created here, a registered channel, or 404. */
  async describeChannel(p: { channelId: string }): Promise<DiscordChannelInfo> {
    this.describeCalls.push(p.channelId);
    const thread = this.threads.find((t) => t.threadId === p.channelId);
    if (thread !== undefined) {
      return { channelId: p.channelId, parentChannelId: thread.channelId, isThread: true };
    }
    const known = this.channels.get(p.channelId);
    if (known !== undefined) return known;
    throw Object.assign(new Error("Unknown Channel"), { status: 404, code: 10003 });
  }

  /** Messages posted into a channel or thread, oldest first. */
  in(channelId: string): SentMessage[] {
    return this.messages.filter((m) => m.channelId === channelId);
  }
}

export const BOTS = { ruda: "1400000000000000101", eden: "1400000000000000102", seum: "1400000000000000103" };
export const HUMAN = "1400000000000000900";
export const CHANNEL = "1400000000000000500";

export const runtimeConfig = {
  agents: {
    ruda: { discordBotId: BOTS.ruda, name: "루다" },
    eden: { discordBotId: BOTS.eden, name: "이든" },
    seum: { discordBotId: BOTS.seum, name: "세움" },
  },
  discord: {
    a2aRetry: { escalationMentionId: HUMAN },
    collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
  },
};

/**
 * Waits for `check` to hold while the runtime works: its side effects wait for real disk writes
 * (fsync) before they reach a port, so a test under fake timers must let real I/O complete too.
 * Rounds of setImmediate (not faked) let I/O callbacks and promise chains run; the fake clock does not move.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what = "the condition",
  limitMs = 10_000,
): Promise<void> {
  // performance.now is not faked by the tests' fake timers: the bound is real time, for a loaded CI.
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (await check()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`waitUntil: ${what} did not happen within ${limitMs} ms`);
}

/** A few rounds of real I/O and promise callbacks, to show that something does NOT happen. */
export async function drain(rounds = 200): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Per test: fake setTimeout/Date at `t0` (setImmediate and I/O stay real, the runtime needs them),
 * and a `runtime()` that creates runtimes stopped after the test. Call at the top of a test file.
 */
export function useRuntimeHarness(t0: number): (o: Parameters<typeof createA2ARuntime>[0]) => A2ARuntime {
  const running = stoppedAfterEachOnFakeClock<A2ARuntime>(t0);
  return (o) => {
    const r = createA2ARuntime({ config: runtimeConfig, logger: textLogger(() => {}), ...o });
    running.push(r);
    return r;
  };
}
