import type { A2ALogger, LogLevel } from "./logger.js";
import type { InspectionEvent, Observer } from "xstate";
import type { A2AConfigInput, A2AErrorInfo, A2AEvent, InboundDiscordMessage } from "../policies/index.js";
import type { RuntimeTimers } from "../durable/timers.js";
import type { MessageCatalog } from "../policies/messages/messageKeys.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";

/** The gateway as the runtime sees it: run an agent, wait for the run, read the reply. */
export interface GatewayPort {
  agent(p: {
    sessionKey: string;
    message: string;
    extraSystemPrompt?: string;
    idempotencyKey: string;
  }): Promise<{ runId: string }>;
  agentWait(p: {
    runId: string;
    timeoutMs: number;
  }): Promise<{ status: "ok" | "timeout" | "not_found" | "error"; error?: string }>;
  readLatestAssistantReply(p: { sessionKey: string }): Promise<string | undefined>;
}

/** Discord as the runtime sees it; the discord.js adapter implements it. */
export interface DiscordPort {
  sendMessage(p: {
    asAgentId: string;
    channelId: string;
    content: string;
    /** Exactly the users the message may ping. */
    mentionUserIds: string[];
    /** At most 25 characters; the same nonce from the same author within minutes posts once. */
    nonce: string;
  }): Promise<{ messageId: string; rateLimit?: DiscordRateLimit }>;
  createThread(p: {
    asAgentId: string;
    channelId: string;
    name: string;
    fromMessageId?: string;
  }): Promise<{ threadId: string; rateLimit?: DiscordRateLimit }>;
  /**
   * Optional: a channel's parent and guild, asked once per unknown channel (allowlists check a thread's
   * parent; thread creation is limited per guild). Without it, a thread of unseen parent is refused.
   */
  describeChannel?(p: { channelId: string }): Promise<DiscordChannelInfo>;
  /**
   * Optional: the latest `limit` messages of a channel, as `asAgentId`'s bot sees them. A post re-run after
   * a crash past `nonceWindowMs` (no more nonce dedup) is looked for here first; without it, it posts again.
   */
  recentMessages?(p: {
    asAgentId: string;
    channelId: string;
    limit: number;
  }): Promise<RecentDiscordMessage[]>;
}

/** Discord's `X-RateLimit-Remaining` and `-Reset-After`: at 0 remaining, that bucket waits for the reset. */
export interface DiscordRateLimit {
  remaining: number;
  resetAfterMs: number;
}

/** A message as `DiscordPort.recentMessages` reports it. */
export interface RecentDiscordMessage {
  messageId: string;
  /** The author's Discord user id (for a bot: its bot user id). */
  authorId: string;
  content: string;
  /** Discord does not return it in message lists; when present, it must match too. */
  nonce?: string;
  /** When Discord created it (ms since the epoch); a message older than the post's first try is not it. */
  createdAt?: number;
}

/** A channel as `DiscordPort.describeChannel` reports it. */
export interface DiscordChannelInfo {
  channelId: string;
  /** Absent for a DM. */
  guildId?: string;
  /** For a thread: the channel it was opened in. */
  parentChannelId?: string;
  isThread: boolean;
}

/** What `sessionsSend` takes: one agent asking another, through the gateway, with follow-up turns. */
export interface SessionsSendParams {
  requesterSessionKey?: string;
  targetSessionKey: string;
  message: string;
  routeKey?: string;
  skipPingPong?: boolean;
  announceTarget?: { channel: string; to?: string } | null;
  /** Absent or 0: resolve once sent. Above 0 (at most MAX_TIMEOUT_SECONDS): with the end, or "timeout". */
  timeoutSeconds?: number;
}

/** `accepted` (sent; the flow goes on), `ok` (replied), `blocked` (no reply; see `error`) or `timeout`. */
export interface A2AFlowResult {
  status: "accepted" | "ok" | "blocked" | "timeout";
  conversationId: string;
  reply?: string;
  retryAttempts: number;
  actualTurns: number;
  terminationReason?: string;
  announced: boolean;
  error?: A2AErrorInfo;
}

/** What `discordSend` takes: an agent's message to another agent, posted as a mention in a Discord thread. */
export interface DiscordSendParams {
  fromAgentId: string;
  targetAgentId: string;
  message: string;
  /** A Discord id; the thread's parent channel must be in the allowlist and known (else channel_not_allowed). */
  threadId?: string;
  /** A Discord id in `allowedChannels`. */
  channelId?: string;
  threadName?: string;
  topicId?: string;
  urgent?: boolean;
  idempotencyKey?: string;
}

/**
 * `rejected` codes: invalid_input (the message starts with the field's name), unknown_agent, empty_message,
 * message_too_long, channel_not_allowed, loop_guard, reply_in_thread, discord_permission,
 * discord_not_found, discord_invalid, discord_unavailable.
 */
export type DiscordSendResult =
  | { status: "sent"; threadId: string; messageId: string; mentionId: string }
  | { status: "rejected"; error: { code: string; message: string } };

/** `handle` (run the agent in `sessionKey`; `alsoAgentIds`: others mentioned), `observe` or `drop`. */
export type PreflightResult =
  | { action: "handle"; agentId: string; sessionKey: string; alsoAgentIds?: string[] }
  | { action: "observe" }
  | { action: "drop"; reason: string };

/** A mention as `mentions()` lists it: whom it asks, in which thread, how far its reminders went. */
export interface MentionSummary {
  id: string;
  threadId: string;
  targetAgentId: string;
  status: "pending" | "reminded" | "responded" | "escalated";
  attempts: number;
}

/** The agent-to-agent control plane of one gateway process: every conversation a persisted actor. */
export interface A2ARuntime {
  /** The texts this runtime writes (reminders, thread names…) in the configured `locale` and `messages`. */
  readonly messages: MessageCatalog;
  /** Locks the state dir, loads it, resumes every live actor and re-arms its timers. */
  start(): Promise<void>;
  /** Persists everything durably and releases the lock; live actors resume at the next start. */
  stop(): Promise<void>;
  /** Rejects with an InvalidInputError naming the field when `p` is not a valid SessionsSendParams. */
  sessionsSend(p: SessionsSendParams): Promise<A2AFlowResult>;
  /** Posts a mention of the target's bot in a collaboration thread; reminded and escalated until answered. */
  discordSend(p: DiscordSendParams): Promise<DiscordSendResult>;
  /**
   * Drops Discord's own messages (`system_message`: `type` not 0, 19, 20 or 23), malformed ones
   * (`invalid_message`, warned), DMs with `allowedGuilds` set (`dm_not_allowed`), and thread messages of
   * unknown parent with `allowedChannels` set (`unknown_parent`).
   */
  handleDiscordMessage(m: InboundDiscordMessage): Promise<PreflightResult>;
  /**
   * Marks a report (sink) thread: no message in it reaches an agent; `discordSend` into it is rejected
   * (`sink_thread`). Resolves once saved in the state dir; an InvalidInputError for a non-Discord id.
   * Threads in `discord.collaboration.sinkThreads` need no registration.
   */
  registerSinkThread(threadId: string): Promise<void>;
  /** The conversation id a route (`requester:target`, or a thread route) is tied to, if it has one. */
  getConversationId(routeKey: string): Promise<string | undefined>;
  /** Live mentions, and finished ones until `cleanupMaxAgeMs` after they ended. */
  mentions(): Promise<MentionSummary[]>;
  /** Calls `listener` with every event as it is emitted; returns a function that unsubscribes. */
  onEvent(listener: (e: A2AEvent) => void): () => void;
  /**
   * Resolves once every write has landed and every side effect (and what it started) has settled. Under
   * fake timers, `await vi.advanceTimersByTimeAsync(ms); await runtime.idle()` sees all that fell due.
   * A side effect that never settles (a hung gateway run) keeps it waiting.
   */
  idle(): Promise<void>;
}

export type { RuntimeTimers };

/** What `inspect` takes: XState's inspection observer or function, or an object holding one (an @statelyai/inspect inspector). */
export type InspectOption =
  | Observer<InspectionEvent>
  | ((event: InspectionEvent) => void)
  | { inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void) };

/** What `createA2ARuntime` takes. Every option has a default; the ports are needed only by the calls that use them. */
export interface A2ARuntimeOptions {
  /** Default ".a2a-state": the event log and the thread state, and the default store. */
  stateDir?: string;
  /** Where the actors are kept (default: the lowdb store in `stateDir`; `createMemoryStore()` for tests). */
  store?: SnapshotStore;
  /** The configuration (see docs/config.md); checked at creation, a bad one throws naming each problem. */
  config?: A2AConfigInput;
  /** How the runtime talks to the agents; needed by `sessionsSend`. */
  gateway?: GatewayPort;
  /** How the runtime posts in Discord; needed by `discordSend` (see `createDiscordJsPort`). */
  discord?: DiscordPort;
  /** The clock, in epoch milliseconds. Default: Date.now. */
  now?: () => number;
  /** Randomness for the retry jitter, in [0, 1). Default: Math.random. */
  random?: () => number;
  /** An @statelyai/inspect inspector (or any XState inspection observer), attached to every actor. */
  inspect?: InspectOption;
  /** Where the runtime schedules (default: the global timers); with a matching `now`, accelerated time. */
  timers?: RuntimeTimers;
  /** A logger (a pino logger fits), or a level: the console from it up (default `"warn"`). */
  logger?: A2ALogger | LogLevel;
}
