import type { MessageCatalog } from "./messageKeys.js";
import { ko } from "./ko.js";

/** English. The agent prompts are the same as in Korean, which prompts the models in English too. */
export const en: MessageCatalog = {
  reminder:
    '[Reminder {attempts}/{maxAttempts}] {target} could you take a look at the request above?\nOriginal: "{original}" ({minutes} min ago)',
  escalation:
    '⚠️ No response ({attempts} attempts, {minutes} min)\nTarget: {target}\nRequest: "{original}"\n{ping}Please take a look.',
  failureNotice:
    '⚠️ Collaboration failed: {from} → {to} ({code})\n{location}\nReason: {reason}\nRequest: "{original}"\n{ping}{check}',
  failureNoticeLocation: "Where: {channel}",
  failureCheckPermission: "Please check the bot's permissions in the channel.",
  failureCheckNotFound: "Please check that the bot and the channel exist.",
  collaborationThreadName: "[Collab] {from} → {to} · {topic}",
  collaborationThreadNameNoTopic: "[Collab] {from} → {to}",
  threadStarter: "🧵 {threadName}",
  reportThreadName: "[Report] {eventType} · {time}",
  noReplyOutcome: "[outcome] blocked: no reply received",
  noReplyOutcomeWithReason: "[outcome] blocked: no reply received ({reason})",
  noReplyNotFound: "run not found",
  noReplyRunError: "run failed",
  noReplyWaitExceeded: "waited more than {seconds} s",
  errorGatewayConnection: "Could not reach the gateway: {reason}",
  errorSessionNotFound: "run not found",
  errorRateLimit: "LLM API rate limit",
  errorContextExceeded: "over the LLM's context window",
  errorServerOverload: "LLM servers overloaded",
  errorUnknown: "the run failed for an unknown reason",
  errorWaitTimeout: "no reply within the wait",
  discordSendSent: "Message sent. Thread ID: {threadId}",
  discordSendRejected: "discord_send was rejected ({code}): {reason}",
  rejectedEmptyMessage: "the message is empty",
  rejectedMessageTooLong: "the message with its mention is over the length limit",
  rejectedChannelNotAllowed: "the channel is not in discord.collaboration.allowedChannels",
  rejectedLoopGuard: "too many collaborations between these agents; wait for the window",
  rejectedReplyInThread: "answer in the thread instead of starting a new collaboration",
  rejectedSinkThread: "the thread is a report thread, where agents do not talk",
  replyContext: ko.replyContext,
  replyContextPrevious: ko.replyContextPrevious,
  replyRoleRequester: ko.replyRoleRequester,
  replyRoleTarget: ko.replyRoleTarget,
  announceContext: ko.announceContext,
  announceStepMessage: ko.announceStepMessage,
  announceNone: ko.announceNone,
};
