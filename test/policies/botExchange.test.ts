import { describe, expect, it } from "vitest";
import {
  admitToExchange,
  type BotExchange,
  type ExchangeRules,
} from "../../src/policies/collaboration/botExchange.js";

const RULES: ExchangeRules = { maxPingPongTurns: 3, autoTerminate: true };

/** Feeds the texts in order; returns how many were handled and the first refusal. */
function play(texts: string[], rules = RULES, start?: BotExchange) {
  let exchange = start;
  let handled = 0;
  for (const [i, content] of texts.entries()) {
    const verdict = admitToExchange(exchange, { content, at: 1_000 + i }, rules);
    exchange = verdict.next;
    if (!verdict.handle)
      return { handled, refused: { index: i, reason: verdict.reason, ended: verdict.ended }, exchange };
    handled += 1;
  }
  return { handled, refused: undefined, exchange };
}

const distinct = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `Point ${i}: what about the ${["cache", "index", "schema", "queue", "lock", "log", "api"][i % 7]} layer, item ${i * 7}?`,
  );

describe("admitToExchange: the turn budget", () => {
  it("hands on the opening, its answer and maxPingPongTurns turns, then ends with turn_limit", () => {
    const { handled, refused, exchange } = play(distinct(10));
    expect(handled).toBe(4);
    expect(refused).toEqual({ index: 4, reason: "turn_limit", ended: true });
    expect(exchange).toMatchObject({ handled: 4, limit: 4, endedBy: "turn_limit" });
  });

  it("an ended exchange stays ended: every later message is refused for the same reason, without ending it again", () => {
    const ended = play(distinct(5)).exchange;
    const later = admitToExchange(
      ended,
      { content: "Completely new topic: can we talk about the deploy?", at: 9 },
      RULES,
    );
    expect(later).toMatchObject({ handle: false, reason: "turn_limit", ended: false });
  });

  it("maxPingPongTurns 0: only the opening is handled", () => {
    expect(play(distinct(3), { maxPingPongTurns: 0, autoTerminate: true })).toMatchObject({
      handled: 1,
      refused: { index: 1, reason: "turn_limit" },
    });
  });

  it("fixes the limit when it opens: later rules do not change it", () => {
    const opened = admitToExchange(undefined, { content: distinct(1)[0] ?? "", at: 1 }, RULES).next;
    expect(opened.limit).toBe(4);
    expect(play(distinct(6), { maxPingPongTurns: 10, autoTerminate: true }, opened).handled).toBe(3);
  });
});

describe("admitToExchange: early endings, as a ping-pong reply's", () => {
  const [a, b] = distinct(2) as [string, string];

  it.each([
    ["REPLY_SKIP", "explicit_skip"],
    ["ok", "minimal_content"],
    ["Thanks, got it. I will ship it today after lunch.", "conclusion_detected"],
    [b, "repetition_detected"],
  ])("a third message %j ends it (%s) and is not handled", (third, reason) => {
    expect(play([a, b, third, "Another question about the rollout plan, anyone?"])).toMatchObject({
      handled: 2,
      refused: { index: 2, reason, ended: true },
    });
  });

  it("reads what a message says without its mentions, as bots address each other by mention", () => {
    const eden = "<@1400000000000000102>";
    expect(play([a, b, `${eden} Thanks, got it. I will merge it after lunch.`]).refused).toMatchObject({
      reason: "conclusion_detected",
    });
    expect(
      play([a, `<@!1400000000000000101> ${b}`, `${eden} ${b} <@&1400000000000000999>`]).refused,
    ).toMatchObject({
      reason: "repetition_detected",
    });
    expect(play([a, b, `${eden} ok`]).refused).toMatchObject({ reason: "minimal_content" });
    expect(play([a, b, `${eden} REPLY_SKIP`]).refused).toMatchObject({ reason: "explicit_skip" });
  });

  it("never cuts short the opening or the answer to it, however short or concluding", () => {
    expect(play(["ok", "Thanks, got it.", distinct(3)[2] ?? ""]).handled).toBe(3);
  });

  it("a question keeps a concluding message going", () => {
    expect(play([a, b, "Got it, but what about the rollback window?"]).handled).toBe(3);
  });

  it("autoTerminate off: only an explicit skip ends it early", () => {
    const rules = { maxPingPongTurns: 3, autoTerminate: false };
    expect(play([a, b, "ok", "ok"], rules).handled).toBe(4);
    expect(play([a, b, "REPLY_SKIP."], rules).refused).toMatchObject({ reason: "explicit_skip" });
  });
});

describe("admitToExchange: what it keeps is small", () => {
  it("keeps no text for the opening, the last text from the answer on, and none once ended", () => {
    const rules = { maxPingPongTurns: 1, autoTerminate: true };
    const opened = admitToExchange(
      undefined,
      { content: "A long opening mention that is never compared?", at: 1 },
      rules,
    );
    expect(opened.next).not.toHaveProperty("lastText");
    const answered = admitToExchange(
      opened.next,
      { content: "The answer, which the next turn is checked against?", at: 2 },
      rules,
    );
    expect(answered.next.lastText).toBe("The answer, which the next turn is checked against?");
    const ended = admitToExchange(
      answered.next,
      { content: "One more turn past the limit, is it?", at: 3 },
      rules,
    );
    expect(ended).toMatchObject({ handle: false, reason: "turn_limit" });
    expect(ended.next).not.toHaveProperty("lastText");
  });
});
