import { z } from "zod";
import { checkConfigConsistency } from "./configConsistency.js";
import { discordId } from "./discordId.js";
import { LocaleSchema, MessagesSchema } from "./messagesSchema.js";

// Every duration is a positive whole number of milliseconds and every count a positive whole number;
// objects are strict so a misspelt key is an error rather than a silently ignored setting.
// The descriptions are the documentation: docs/config.md is generated from them (scripts/config-docs.ts).
const positive = z.int().positive();
const turns = z.int().min(0).max(10);
const durationMs = (fallback: number) => positive.default(fallback);
const count = (fallback: number) => positive.default(fallback);
const flag = (fallback: boolean, description: string) => z.boolean().default(fallback).describe(description);
const id = z.string().trim().min(1);

const AgentA2AOverrideSchema = z.strictObject({
  maxPingPongTurns: turns
    .optional()
    .describe(
      "Replaces `session.agentToAgent.maxPingPongTurns` for conversations this agent is the target of.",
    ),
  timeout: z
    .strictObject({
      maxWaitMs: positive
        .optional()
        .describe("Replaces `session.agentToAgent.timeout.maxWaitMs` when waiting for this agent's reply."),
      chunkMs: positive
        .optional()
        .describe("Replaces `session.agentToAgent.timeout.chunkMs` when waiting for this agent's reply."),
    })
    .optional()
    .describe("Reply-wait timeouts for this agent (one that takes long, e.g. to analyse code)."),
});

const AgentToAgentSchema = z.strictObject({
  maxPingPongTurns: turns
    .default(5)
    .describe(
      "Most follow-up turns after the target's first reply, requester and target alternating; 0 turns the " +
        "ping-pong off. The message's intent can lower it, never raise it: a notification or escalation " +
        "gets none, a question or result report 1, a request for review or discussion the full limit. " +
        "In a Discord thread, a bot-to-bot exchange (until a human speaks) is handled for at most " +
        "1 + this many messages (the handling agent's value), then dropped (`turn_limit`).",
    ),
  autoTerminate: flag(
    true,
    "End the ping-pong early when a reply repeats the previous one, says almost nothing or concludes " +
      "the conversation. With false, only an explicit skip token ends it before the turn limit.",
  ),
  retry: z
    .strictObject({
      enabled: flag(
        true,
        "Retry a failed wait for a reply when the error is retryable (rate limit, server overload, " +
          "gateway connection, wait timeout, a run not found once). With false, the first failure blocks the flow.",
      ),
      maxAttempts: z
        .int()
        .min(1)
        .max(10)
        .default(3)
        .describe(
          "Most tries of one message, the first included. The latest failure's error class has its own " +
            "limit (rate limit, server overload, gateway connection 3; wait timeout and a missing run 2; " +
            "permanent errors 1), capped at this: 1 retries nothing, the default 3 lowers no class's limit.",
        ),
      baseBackoffMs: durationMs(2_000).describe(
        "Backoff before retry n+1 is min(baseBackoffMs × 2^n, maxBackoffMs) with ±25 % jitter, unless " +
          "the error named a Retry-After, which is used as is.",
      ),
      maxBackoffMs: durationMs(60_000).describe("Upper bound of the computed backoff (before jitter)."),
    })
    .prefault({})
    .describe("Retries of a failed wait for the target agent's reply."),
  timeout: z
    .strictObject({
      maxWaitMs: durationMs(300_000).describe(
        "Longest wait for the reply in one attempt, summed over its wait calls (backoffs do not count); " +
          "past it the attempt fails as a wait timeout.",
      ),
      chunkMs: durationMs(30_000).describe(
        "Length of each wait call to the gateway (`agentWait`); a long wait is made of such chunks.",
      ),
    })
    .prefault({})
    .describe("How long the runtime waits for the target agent's reply."),
  agents: z
    .record(id, AgentA2AOverrideSchema)
    .optional()
    .describe(
      "Per-agent overrides, keyed by agent id (the `<id>` of session keys `agent:<id>:…`), applied when " +
        "that agent is the target.",
    ),
});

/** `discord.a2aRetry`: what a mention is reminded and escalated by (the mention machine takes it as it is). */
export const A2ARetrySchema = z.strictObject({
  enabled: flag(
    true,
    "Remind a silent target and escalate to a human. With false, a `discordSend` mention is still " +
      "tracked (an answer in the thread ends it `responded`, `mentions()` lists it) but never " +
      "reminded or escalated: it waits without a timeout.",
  ),
  responseTimeoutMs: durationMs(300_000).describe(
    "Time without an answer from the target, counted from the latest delivery (the mention or the " +
      "last reminder), before the next reminder or the escalation.",
  ),
  urgentResponseTimeoutMs: durationMs(60_000).describe(
    "`responseTimeoutMs` for a mention sent with `urgent: true`.",
  ),
  maxAttempts: count(3).describe(
    "Deliveries before escalating: the mention is 1, each reminder adds 1; at the timeout after the " +
      "last one the escalation is posted. With the defaults: reminders at 5 and 10 minutes, " +
      "escalation at 15.",
  ),
  cleanupMaxAgeMs: durationMs(86_400_000).describe(
    "How long a finished collaboration or flow stays stored (and listed by `mentions()`), counted " +
      "from its last update, before it is pruned. Also how long the runtime remembers the ids of the " +
      "reminders it posted, and (up to `participantTTL`) a thread's parent channel that no live " +
      "collaboration, participant, route or sink needs. A running runtime prunes and expires every quarter of this age (at " +
      "least a minute apart, at most an hour).",
  ),
  escalationMentionId: discordId
    .optional()
    .describe("Discord user id of the human the escalation pings; unset, the escalation pings nobody."),
  notifyOnFailure: flag(
    true,
    "Post the escalation message. With false, the mention ends `escalated` silently.",
  ),
});

const DiscordSchema = z.strictObject({
  threadCommunication: z
    .strictObject({
      enabled: flag(
        true,
        "Let agents handle messages in Discord threads. With false, an agent bot's message in a thread " +
          "is only observed, and so is a human's that mentions an agent.",
      ),
      allowSiblingMentionsInThreads: flag(
        true,
        "An agent bot's thread message that mentions another agent is handled by the mentioned agent, " +
          "which joins the thread; one that mentions no agent is only observed. With false, every agent " +
          "bot's thread message is only observed.",
      ),
      allowHumanMentionsInThreads: flag(
        true,
        "A human's thread message that mentions an agent is handled by that agent. With false, it is " +
          "only observed.",
      ),
    })
    .prefault({})
    .describe("Who handles messages inside Discord threads."),
  a2aRetry: A2ARetrySchema.prefault({}).describe(
    "Reminders to a silent target of `discordSend` and escalation to a human.",
  ),
  collaboration: z
    .strictObject({
      defaultChannel: discordId
        .optional()
        .describe(
          "Channel in which a collaboration opens its thread when the call names no channel or thread; " +
            "it must be in `allowedChannels` too.",
        ),
      allowedChannels: z
        .array(discordId)
        .default([])
        .describe(
          "Channels in which collaborations may open threads; a call for another channel is rejected " +
            "(`channel_not_allowed`), never redirected, so an empty list allows none. When not empty, " +
            "messages from other channels (a thread's by its parent) are dropped.",
        ),
      allowedGuilds: z
        .array(discordId)
        .optional()
        .describe("Guilds (servers) whose messages are handled; unset, any guild. Others are dropped."),
      threadReuseTTL: durationMs(21_600_000).describe(
        "A new collaboration from the same agent to the same target (and topic) reuses their thread if it " +
          "was used within this time; after it, a new thread is opened.",
      ),
      observerHistoryLimit: count(50).describe(
        "Most compact observer records (messages seen but handled by no agent) kept per channel or thread.",
      ),
      observerHistoryTTL: durationMs(86_400_000).describe("Age after which an observer record is dropped."),
      participantTTL: durationMs(86_400_000).describe(
        "A thread's participants are forgotten this long after the thread's last activity.",
      ),
      maxMessageLength: count(2_000).describe(
        "Longest collaboration message, the mention included (Discord allows 2000 characters); a longer " +
          "one is rejected (`message_too_long`).",
      ),
      requestTimeoutMs: durationMs(10_000).describe(
        "How long one Discord call (a post, a thread, a channel lookup) may take; one that has not " +
          "answered by then fails as a timeout and is retried like a 5xx.",
      ),
      nonceWindowMs: durationMs(240_000).describe(
        "How long Discord is counted on to post a message once per nonce (it keeps nonces a few " +
          "minutes). A post re-run after a crash later than this after it first started is looked for " +
          "among the channel's recent messages first, and not posted again if found.",
      ),
      sinkThreads: z
        .array(discordId)
        .default([])
        .describe(
          "Report (sink) threads, by id: messages in them never reach an agent and `discordSend` " +
            "refuses them. More can be registered at run time (`registerSinkThread`).",
        ),
      loopGuard: z
        .strictObject({
          maxCollaboratePerPair: count(10).describe(
            "Most collaboration calls between two agents (either direction) per `windowMs`; the last " +
              "allowed one carries a warning, the next is rejected (`loop_guard`).",
          ),
          windowMs: durationMs(300_000).describe("Sliding window of `maxCollaboratePerPair`."),
          maxMessagesPerThread: count(6).describe(
            "Most agent (bot) messages a thread accepts per `threadWindowMs`; more are dropped. " +
              "Reminders and escalations do not count.",
          ),
          threadWindowMs: durationMs(60_000).describe("Sliding window of `maxMessagesPerThread`."),
        })
        .prefault({})
        .describe("Limits that stop agents from talking in circles."),
      rateLimit: z
        .strictObject({
          threadCreationPerMinute: count(5).describe(
            "Threads opened per minute in one guild (server), whichever of its channels they are opened " +
              "in; more wait in order, none is dropped. Channels whose guild is unknown share one limit.",
          ),
          messagePerChannelPerSecond: count(5).describe(
            "Messages sent per second in one channel or thread; more wait in order, none is dropped. " +
              "The most sent: when Discord's answers say a channel's bucket is empty, it waits for the reset.",
          ),
        })
        .prefault({})
        .describe("Discord rate limits the runtime keeps to by queueing."),
    })
    .prefault({})
    .describe("Collaboration threads opened by `discordSend`: where, how long they live, limits."),
});

const AgentSchema = z.strictObject({
  discordBotId: discordId.describe(
    "User id of the agent's Discord bot: the id mentions ping and by which its messages are recognised.",
  ),
  name: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe("Display name used in collaboration thread names; unset, the agent id."),
});

const ConfigObjectSchema = z.strictObject({
  locale: LocaleSchema,
  session: z
    .strictObject({
      agentToAgent: AgentToAgentSchema.prefault({}).describe(
        "Agent-to-agent messages (`sessionsSend`): the ping-pong that follows a reply.",
      ),
    })
    .prefault({}),
  discord: DiscordSchema.prefault({}),
  agents: z
    .record(id, AgentSchema)
    .default({})
    .describe("The agents, keyed by agent id, each with its Discord bot."),
  messages: MessagesSchema,
});

/** The config's zod schema (strict: an unknown key is an error); `parseConfig` applies it. */
export const A2AConfigSchema = ConfigObjectSchema.superRefine(checkConfigConsistency).describe(
  "The language of everything the library writes for people and agents; `messages` replaces single texts.",
);

/** The config as the library uses it: every default filled in. */
export type A2AConfig = z.output<typeof A2AConfigSchema>;
/** The config as a user writes it: everything optional. */
export type A2AConfigInput = z.input<typeof A2AConfigSchema>;
