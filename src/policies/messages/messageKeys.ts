/** One text's entry: what it is, and the placeholders its template may use. */
function text<const P extends readonly string[] = []>(
  description: string,
  placeholders = [] as unknown as P,
) {
  return { description, placeholders };
}

/** Every text the library writes, by key, with the `{name}` placeholders a config override may use. */
export const MESSAGES = {
  reminder: text(
    "A reminder of an unanswered mention, posted in its thread by the requester's bot. `{target}` is the target bot's mention, `{original}` the request (quoted on one line), `{minutes}` the whole minutes since it was sent.",
    ["attempts", "maxAttempts", "target", "original", "minutes"],
  ),
  escalation: text(
    "The last post of an unanswered mention, calling a human. `{ping}` is the mention of `discord.a2aRetry.escalationMentionId` followed by a space, or nothing; `{target}` is named without a ping.",
    ["attempts", "maxAttempts", "target", "original", "minutes", "ping"],
  ),
  failureNotice: text(
    "Posted in the default channel when Discord refuses a collaboration (403) or cannot find its channel or bot (404). `{reason}` is Discord's message, `{location}` the `failureNoticeLocation` text or nothing (a line left empty is dropped), `{check}` what to check.",
    ["from", "to", "code", "location", "reason", "original", "ping", "check"],
  ),
  failureNoticeLocation: text("The `{location}` of a failure notice, when the channel is known.", [
    "channel",
  ]),
  failureCheckPermission: text("The `{check}` of a failure notice after a 403."),
  failureCheckNotFound: text("The `{check}` of a failure notice after a 404."),
  collaborationThreadName: text(
    "A new collaboration thread's name (at most 100 characters: the topic is what gets cut).",
    ["from", "to", "topic"],
  ),
  collaborationThreadNameNoTopic: text("A new collaboration thread's name when there is no topic.", [
    "from",
    "to",
  ]),
  threadStarter: text("The message in the parent channel a new collaboration thread is opened from.", [
    "threadName",
  ]),
  reportThreadName: text(
    "A report (sink) thread's name; its text before the first placeholder is how such threads are recognised.",
    ["eventType", "time"],
  ),
  noReplyOutcome: text("The outcome of a message that got no reply, without a reason."),
  noReplyOutcomeWithReason: text("The outcome of a message that got no reply, with the reason.", ["reason"]),
  noReplyNotFound: text("Reason: the gateway no longer knows the run."),
  noReplyRunError: text("Reason: the run failed."),
  noReplyWaitExceeded: text("Reason: the reply wait ran out.", ["seconds"]),
  errorGatewayConnection: text("Error: the gateway could not be reached.", ["reason"]),
  errorSessionNotFound: text("Error: the gateway does not know the run."),
  errorRateLimit: text("Error: the model's API is rate limited."),
  errorContextExceeded: text("Error: the conversation is over the model's context window."),
  errorServerOverload: text("Error: the model's servers are overloaded."),
  errorUnknown: text("Error: the run failed without saying why."),
  errorWaitTimeout: text("Error: no reply within the wait."),
  discordSendSent: text("The `discord_send` tool's answer once the mention is posted.", ["threadId"]),
  discordSendRejected: text("The `discord_send` tool's answer when nothing was sent.", ["code", "reason"]),
  rejectedEmptyMessage: text("The `{reason}` of `discordSendRejected` for `empty_message`."),
  rejectedMessageTooLong: text("The `{reason}` of `discordSendRejected` for `message_too_long`."),
  rejectedChannelNotAllowed: text("The `{reason}` of `discordSendRejected` for `channel_not_allowed`."),
  rejectedLoopGuard: text("The `{reason}` of `discordSendRejected` for `loop_guard`."),
  rejectedReplyInThread: text("The `{reason}` of `discordSendRejected` for `reply_in_thread`."),
  rejectedSinkThread: text("The `{reason}` of `discordSendRejected` for `sink_thread`."),
  replyContext: text(
    "The extra system prompt of one ping-pong step; keep `Turn {turn} of {maxTurns}` and `{skipToken}` in it.",
    [
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
  ),
  replyContextPrevious: text(
    "The `{previous}` of a reply context, when there is a summary of the discussion so far.",
    ["summary"],
  ),
  replyRoleRequester: text("The `{role}` of a reply context for the agent that asked."),
  replyRoleTarget: text("The `{role}` of a reply context for the agent that was asked."),
  announceContext: text("The extra system prompt of the announce step; keep `{skipToken}` in it.", [
    "original",
    "roundOneReply",
    "latestReply",
    "skipToken",
  ]),
  announceStepMessage: text(
    "The message the target agent is sent for the announce step (the prompt says what to do).",
  ),
  announceNone: text("Stands in for a reply the announce context does not have."),
};

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
