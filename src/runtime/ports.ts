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
   * Optional: what Discord says of a channel (a thread's parent, the guild a channel belongs to). The
   * runtime asks once per channel it does not know and remembers the answer: allowlists are checked
   * against a thread's parent, and thread creation is limited per guild. Without it, a thread whose
   * parent the runtime never saw is refused (allowlists fail closed).
   */
  describeChannel?(p: { channelId: string }): Promise<DiscordChannelInfo>;
  /**
   * Optional: the latest `limit` messages of a channel or thread, as `asAgentId`'s bot sees them. A
   * post that may have been made before a crash and is re-run longer than `nonceWindowMs` after it
   * first started (Discord no longer deduplicates its nonce) is looked for here first, and taken as
   * done when found. Without it, such a post is made again (with a warning).
   */
  recentMessages?(p: {
    asAgentId: string;
    channelId: string;
    limit: number;
  }): Promise<RecentDiscordMessage[]>;
}

/**
 * What Discord's rate-limit headers said of the bucket a request counted against
 * (`X-RateLimit-Remaining`, `X-RateLimit-Reset-After`). When nothing remains, the runtime sends
 * nothing more to that channel (or opens no thread in that guild) until the reset.
 */
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
  /**
   * Absent or 0: resolve once the message is sent. Above 0: resolve with the end, or "timeout". At most
   * MAX_TIMEOUT_SECONDS (2 147 483 s, what one timer can wait); more is refused.
   */
  timeoutSeconds?: number;
}

/**
 * How a `sessionsSend` ended: `accepted` (sent, the flow goes on as an actor), `ok` (replied), `blocked`
 * (no reply after the retries; `error` says why) or `timeout` (the caller's `timeoutSeconds` passed first).
 */
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
 * `rejected` codes: invalid_input (a field of the wrong type or shape; the message starts with its
 * name), unknown_agent, empty_message, message_too_long, channel_not_allowed, loop_guard,
 * reply_in_thread, discord_permission, discord_not_found, discord_invalid, discord_unavailable.
 */
export type DiscordSendResult =
  | { status: "sent"; threadId: string; messageId: string; mentionId: string }
  | { status: "rejected"; error: { code: string; message: string } };

/**
 * What to do with a Discord message: `handle` (start the agent's run in `sessionKey`; `alsoAgentIds` are
 * the other agents it mentions), `observe` (remember it as context) or `drop` (ignore it, with the reason).
 */
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

/**
 * The agent-to-agent control plane of one gateway process. Every conversation is a persisted actor:
 * `stop()` or a crash loses nothing, and the next `start()` resumes each one with its timers.
 */
export interface A2ARuntime {
  /**
   * The texts this runtime writes (reminders, thread names, outcomes, …) in the configured `locale`
   * with the config's `messages` applied; `handleDiscordSend` answers the agent in them.
   */
  readonly messages: MessageCatalog;
  /** Locks the state dir, loads it, resumes every live actor and re-arms its timers. */
  start(): Promise<void>;
  /** Persists everything durably and releases the lock; live actors resume at the next start. */
  stop(): Promise<void>;
  /** Rejects with an InvalidInputError naming the field when `p` is not a valid SessionsSendParams. */
  sessionsSend(p: SessionsSendParams): Promise<A2AFlowResult>;
  /**
   * Posts `message` as `fromAgentId`'s bot, mentioning `targetAgentId`'s bot in a collaboration thread, and
   * resolves once it is posted; the mention is then reminded and escalated until the target answers.
   */
  discordSend(p: DiscordSendParams): Promise<DiscordSendResult>;
  /**
   * Drops a message Discord posts itself (`system_message`: its `type` is not 0, 19, 20 or 23) before
   * anything else, and a malformed message (`invalid_message`, with a warning naming the field); with `allowedGuilds`
   * set a DM (`dm_not_allowed`); with `allowedChannels` set a thread message whose parent is unknown
   * (`unknown_parent`).
   */
  handleDiscordMessage(m: InboundDiscordMessage): Promise<PreflightResult>;
  /**
   * Marks a Discord thread as a report (sink) thread, where events are written for people to read: a
   * message in it never reaches an agent, and `discordSend` into it is rejected (`sink_thread`).
   * Resolves once the registration is saved in the state dir, so it survives a restart; rejects with
   * an InvalidInputError when `threadId` is not a Discord id (a snowflake). Threads listed in
   * `discord.collaboration.sinkThreads` need no registration.
   */
  registerSinkThread(threadId: string): Promise<void>;
  /** The conversation id a route (`requester:target`, or a thread route) is tied to, if it has one. */
  getConversationId(routeKey: string): Promise<string | undefined>;
  /** Live mentions, and finished ones until `cleanupMaxAgeMs` after they ended. */
  mentions(): Promise<MentionSummary[]>;
  /** Calls `listener` with every event as it is emitted; returns a function that unsubscribes. */
  onEvent(listener: (e: A2AEvent) => void): () => void;
  /**
   * Resolves once nothing is in flight: every write has landed (actors, event log, thread state), every side effect has settled, and whatever they started in turn has too. Under
   * vitest fake timers, `await vi.advanceTimersByTimeAsync(ms); await runtime.idle()` sees everything
   * that fell due in those `ms`, even on the disk store. A side effect that never settles (a gateway
   * run that hangs) keeps it waiting.
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
  /**
   * Where the actors are kept (default: the lowdb store in `stateDir`). `createMemoryStore()` keeps
   * them in memory only: for tests and examples, nothing survives a restart of the process.
   */
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
  /**
   * Where the runtime schedules (durable timers, `timeoutSeconds`, Discord rate limits). Default: the
   * global timers, so vitest fake timers drive it. Pass these with a matching `now` to run in
   * accelerated time, as the demo's `--speed` does.
   */
  timers?: RuntimeTimers;
  /**
   * Where the runtime logs, by level, with structured fields (a pino logger fits as it is), or a level
   * (`"debug"`, `"info"`, `"warn"`, `"error"`): the console from that level up. Default `"warn"`: a stale
   * lock taken over, a corrupt file set aside, a post that failed for good.
   */
  logger?: A2ALogger | LogLevel;
}
