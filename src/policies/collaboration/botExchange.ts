import { mentionMarkup } from "./discordIds.js";
import { EARLY_TERMINATION_REASONS, shouldTerminatePingPong } from "../pingPong/shouldTerminatePingPong.js";

/** Why a bot↔bot exchange in a thread ended: its turn budget, or one of the ping-pong's early endings. */
export const EXCHANGE_END_REASONS = ["turn_limit", ...EARLY_TERMINATION_REASONS] as const;
export type ExchangeEndReason = (typeof EXCHANGE_END_REASONS)[number];

/** One thread's bot↔bot exchange: from its opening message up to the next human message. */
export interface BotExchange {
  /** Messages of the exchange handled so far, the opening one included: each is one agent run. */
  handled: number;
  /** The most it may handle: the answer to the opening plus `maxPingPongTurns` turns, fixed when it opened. */
  limit: number;
  /** The last handled message's text, for the repetition check: kept from the answer on, until the end. */
  lastText?: string;
  /** Set once the exchange has ended: every later bot message it would hand on is dropped for this. */
  endedBy?: ExchangeEndReason;
  /** When it last handled or ended. */
  at: number;
}

export interface ExchangeRules {
  /** The ping-pong turns after the answer to the opening (the config's `maxPingPongTurns`). */
  maxPingPongTurns: number;
  /** As for sessions_send: with false, only an explicit skip ends the exchange before its limit. */
  autoTerminate: boolean;
}

export type ExchangeVerdict =
  | { handle: true; next: BotExchange }
  | {
      handle: false;
      reason: ExchangeEndReason;
      next: BotExchange;
      /** This message ended it. */ ended: boolean;
    };

/**
 * Whether a thread message preflight hands on is handled, counted as sessions_send counts runs: the
 * opening, the answer, then `maxPingPongTurns` turns, each of which may end the exchange as a ping-pong
 * ends. Pure: the caller keeps `next`.
 */
export function admitToExchange(
  exchange: BotExchange | undefined,
  message: { content: string; at: number },
  rules: ExchangeRules,
): ExchangeVerdict {
  // No exchange yet: this message opens one, under the rules of the agent it goes to.
  const current = exchange ?? { handled: 0, limit: 1 + rules.maxPingPongTurns, at: message.at };
  const text = withoutMentions(message.content);
  if (current.endedBy !== undefined)
    return { handle: false, reason: current.endedBy, next: current, ended: false };
  if (current.handled >= current.limit) return end(current, "turn_limit", message.at);
  // The opening message and the answer to it are never cut short, as a sessions_send's first reply is not.
  if (current.handled >= 2) {
    const check = shouldTerminatePingPong({
      replyText: text,
      turn: current.handled - 1,
      maxTurns: current.limit - 1,
      previousReplies: current.lastText === undefined ? [] : [current.lastText],
    });
    const applies = rules.autoTerminate || check.reason === "explicit_skip";
    if (check.terminate && check.reason !== "" && applies) return end(current, check.reason, message.at);
  }
  const { lastText: _previous, ...rest } = current;
  // The opening is never compared with anything: its text need not be kept.
  const next = { ...rest, handled: current.handled + 1, at: message.at };
  return { handle: true, next: current.handled >= 1 ? { ...next, lastText: text } : next };
}

// A bot addresses the other by mention: what it says is the rest.
function withoutMentions(content: string): string {
  return content.replace(mentionMarkup(), " ").replace(/\s+/g, " ").trim();
}

function end(exchange: BotExchange, reason: ExchangeEndReason, at: number): ExchangeVerdict {
  const { lastText: _done, ...rest } = exchange;
  return { handle: false, reason, next: { ...rest, endedBy: reason, at }, ended: true };
}
