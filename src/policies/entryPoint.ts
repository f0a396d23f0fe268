// The entry point `a2a-statecharts/policies`: the pure decisions the machines are made of, for a gateway
// that wants one without the runtime (classify a failure, compute a backoff, name a thread). No I/O and
// no timers; a bad argument throws an InvalidInputError naming it.

// Reply wait: error classification, retry-after, backoff, the no-reply outcome
export { A2AErrorCategory, type A2AErrorInfo } from "./replyWait/A2AErrorInfo.js";
export { classifyA2AError } from "./replyWait/classifyA2AError.js";
export { extractRetryAfterMs } from "./replyWait/extractRetryAfterMs.js";
export { calculateBackoffMs } from "./replyWait/calculateBackoffMs.js";
export { buildNoReplyOutcomeMessage } from "./replyWait/buildNoReplyOutcomeMessage.js";

// Ping-pong: intent, turns, early termination, announce, the agents' extra system prompts
export { A2AMessageIntent } from "./pingPong/A2AMessageIntent.js";
export { classifyMessageIntent } from "./pingPong/classifyMessageIntent.js";
export { resolveEffectivePingPongTurns } from "./pingPong/resolveEffectivePingPongTurns.js";
export { calculateSimilarity } from "./pingPong/calculateSimilarity.js";
export { ANNOUNCE_SKIP_TOKEN, isAnnounceSkip, isReplySkip, REPLY_SKIP_TOKEN } from "./pingPong/skipTokens.js";
export { shouldTerminatePingPong } from "./pingPong/shouldTerminatePingPong.js";
export { decideAnnounce, shouldRunAnnounce } from "./pingPong/decideAnnounce.js";
export { buildAgentToAgentAnnounceContext, buildAgentToAgentReplyContext } from "./pingPong/prompts.js";

// Collaboration in Discord threads: names, routes, observers, failures, session keys
export {
  buildCollaborationThreadName,
  buildReportThreadName,
  isReportThreadName,
} from "./collaboration/threadNames.js";
// What a collaboration machine's post says (PostMessageInput.text), in a language of your catalog
export { type CollaborationText, renderCollaborationText } from "./collaboration/collaborationTexts.js";
export {
  extractObserverTokens,
  type ObserverRecord,
  toObserverRecord,
} from "./collaboration/observerRecords.js";
export { classifyDiscordFailure, type DiscordFailure } from "./collaboration/classifyDiscordFailure.js";
export {
  filterBootstrapFiles,
  isA2ASessionKey,
  resolveThreadSessionKey,
  threadRouteKey,
} from "./collaboration/sessionKeys.js";

// What a policy function throws for an argument it cannot use, and the base of every error class
export { A2AError } from "../errors/A2AError.js";
export { InvalidInputError } from "./InvalidInputError.js";
