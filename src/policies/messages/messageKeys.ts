/**
 * Every text the library writes for people or agents, by key: what it is and the placeholders its
 * template may use. A template is plain text with `{name}` placeholders; these lists are what a
 * config override is checked against.
 */
export const MESSAGES = {
  reminder: {
    description:
      "A reminder of an unanswered mention, posted in its thread by the requester's bot. `{target}` is the target bot's mention, `{original}` the request (quoted on one line), `{minutes}` the whole minutes since it was sent.",
    placeholders: ["attempts", "maxAttempts", "target", "original", "minutes"],
  },
  escalation: {
    description:
      "The last post of an unanswered mention, calling a human. `{ping}` is the mention of `discord.a2aRetry.escalationMentionId` followed by a space, or nothing; `{target}` is named without a ping.",
    placeholders: ["attempts", "maxAttempts", "target", "original", "minutes", "ping"],
  },
  failureNotice: {
    description:
      "Posted in the default channel when Discord refuses a collaboration (403) or cannot find its channel or bot (404). `{reason}` is Discord's message, `{location}` the `failureNoticeLocation` text or nothing (a line left empty is dropped), `{check}` what to check.",
    placeholders: ["from", "to", "code", "location", "reason", "original", "ping", "check"],
  },
  failureNoticeLocation: {
    description: "The `{location}` of a failure notice, when the channel is known.",
    placeholders: ["channel"],
  },
  failureCheckPermission: {
    description: "The `{check}` of a failure notice after a 403.",
    placeholders: [],
  },
  failureCheckNotFound: {
    description: "The `{check}` of a failure notice after a 404.",
    placeholders: [],
  },
  collaborationThreadName: {
    description: "A new collaboration thread's name (at most 100 characters: the topic is what gets cut).",
    placeholders: ["from", "to", "topic"],
  },
  collaborationThreadNameNoTopic: {
    description: "A new collaboration thread's name when there is no topic.",
    placeholders: ["from", "to"],
  },
  threadStarter: {
    description: "The message in the parent channel a new collaboration thread is opened from.",
    placeholders: ["threadName"],
  },
  reportThreadName: {
    description:
      "A report (sink) thread's name; its text before the first placeholder is how such threads are recognised.",
    placeholders: ["eventType", "time"],
  },
  noReplyOutcome: {
    description: "The outcome of a message that got no reply, without a reason.",
    placeholders: [],
  },
  noReplyOutcomeWithReason: {
    description: "The outcome of a message that got no reply, with the reason.",
    placeholders: ["reason"],
  },
  noReplyNotFound: {
    description: "Reason: the gateway no longer knows the run.",
    placeholders: [],
  },
  noReplyRunError: {
    description: "Reason: the run failed.",
    placeholders: [],
  },
  noReplyWaitExceeded: {
    description: "Reason: the reply wait ran out.",
    placeholders: ["seconds"],
  },
  errorGatewayConnection: {
    description: "Error: the gateway could not be reached.",
    placeholders: ["reason"],
  },
  errorSessionNotFound: {
    description: "Error: the gateway does not know the run.",
    placeholders: [],
  },
  errorRateLimit: {
    description: "Error: the model's API is rate limited.",
    placeholders: [],
  },
  errorContextExceeded: {
    description: "Error: the conversation is over the model's context window.",
    placeholders: [],
  },
  errorServerOverload: {
    description: "Error: the model's servers are overloaded.",
    placeholders: [],
  },
  errorUnknown: {
    description: "Error: the run failed without saying why.",
    placeholders: [],
  },
  errorWaitTimeout: {
    description: "Error: no reply within the wait.",
    placeholders: [],
  },
  discordSendSent: {
    description: "The `discord_send` tool's answer once the mention is posted.",
    placeholders: ["threadId"],
  },
  discordSendRejected: {
    description: "The `discord_send` tool's answer when nothing was sent.",
    placeholders: ["code", "reason"],
  },
  rejectedEmptyMessage: {
    description: "The `{reason}` of `discordSendRejected` for `empty_message`.",
    placeholders: [],
  },
  rejectedMessageTooLong: {
    description: "The `{reason}` of `discordSendRejected` for `message_too_long`.",
    placeholders: [],
  },
  rejectedChannelNotAllowed: {
    description: "The `{reason}` of `discordSendRejected` for `channel_not_allowed`.",
    placeholders: [],
  },
  rejectedLoopGuard: {
    description: "The `{reason}` of `discordSendRejected` for `loop_guard`.",
    placeholders: [],
  },
  rejectedReplyInThread: {
    description: "The `{reason}` of `discordSendRejected` for `reply_in_thread`.",
    placeholders: [],
  },
  rejectedSinkThread: {
    description: "The `{reason}` of `discordSendRejected` for `sink_thread`.",
    placeholders: [],
  },
  replyContext: {
    description:
      "The extra system prompt of one ping-pong step; keep `Turn {turn} of {maxTurns}` and `{skipToken}` in it.",
    placeholders: [
      "role",
      "turn",
      "maxTurns",
      "intent",
      "requesterSessionKey",
      "targetSessionKey",
      "original",
      "previous",
      "remaining",
      "skipToken",
    ],
  },
  replyContextPrevious: {
    description: "The `{previous}` of a reply context, when there is a summary of the discussion so far.",
    placeholders: ["summary"],
  },
  replyRoleRequester: {
    description: "The `{role}` of a reply context for the agent that asked.",
    placeholders: [],
  },
  replyRoleTarget: {
    description: "The `{role}` of a reply context for the agent that was asked.",
    placeholders: [],
  },
  announceContext: {
    description: "The extra system prompt of the announce step; keep `{skipToken}` in it.",
    placeholders: ["original", "roundOneReply", "latestReply", "skipToken"],
  },
  announceStepMessage: {
    description: "The message the target agent is sent for the announce step (the prompt says what to do).",
    placeholders: [],
  },
  announceNone: {
    description: "Stands in for a reply the announce context does not have.",
    placeholders: [],
  },
} as const satisfies Record<string, { description: string; placeholders: readonly string[] }>;

/** The key of one text, as written under `messages` in the config. */
export type MessageKey = keyof typeof MESSAGES;

/** The placeholders of one message, as the values its template is rendered with. */
export type MessageParams<K extends MessageKey> = Record<
  (typeof MESSAGES)[K]["placeholders"][number],
  string | number
>;

/** The keys whose templates have no placeholders: fixed sentences. */
export type PlainMessageKey = {
  [K in MessageKey]: (typeof MESSAGES)[K]["placeholders"] extends readonly [] ? K : never;
}[MessageKey];

/** A complete set of templates: one per key. */
export type MessageCatalog = Readonly<Record<MessageKey, string>>;

/** Every key, in catalog order. */
export const MESSAGE_KEYS = Object.keys(MESSAGES) as MessageKey[];

/** Whether `key` names a text of the catalog (its own keys only, so "constructor" does not). */
export function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(MESSAGES, key);
}

/**
 * Placeholders a template must keep: an agent ends a ping-pong or stays silent only by answering the
 * exact skip token, and the turn count is how it knows when the conversation ends.
 */
export const REQUIRED_PLACEHOLDERS: Readonly<Partial<Record<MessageKey, readonly string[]>>> = {
  replyContext: ["turn", "maxTurns", "skipToken"],
  announceContext: ["skipToken"],
};

/** The placeholders `key`'s template may use. */
export function placeholdersFor(key: MessageKey): readonly string[] {
  return MESSAGES[key].placeholders;
}
