// The bot↔bot turn control on the Discord path: in a thread, a bot's message goes only to the agents
// it mentions, and an exchange of bot messages is handled for its opening, the answer and at most
// maxPingPongTurns turns, ends early as a ping-pong does, and a human message starts a new one.
import { describe, expect, it, vi } from "vitest";
import { collectStatus, runStatus } from "../../src/cli/status.js";
import type { A2AEvent, A2ARuntime, InboundDiscordMessage, PreflightResult } from "../../src/index.js";
import {
  BOTS,
  FakeDiscord,
  HUMAN,
  runtimeConfig,
  type SentMessage,
  tempStateDir,
  useRuntimeHarness,
} from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const runtime = useRuntimeHarness(T0);
type Agent = keyof typeof BOTS;

function config(maxPingPongTurns: number) {
  return { ...runtimeConfig, session: { agentToAgent: { maxPingPongTurns } } };
}

/** A runtime with a thread opened by ruda's discord_send to eden; messages are fed as Discord delivers them. */
async function threadOpenedByDiscordSend(o: { maxPingPongTurns?: number; stateDir?: string } = {}) {
  const discord = new FakeDiscord();
  const events: A2AEvent[] = [];
  const r = runtime({
    config: config(o.maxPingPongTurns ?? 3),
    discord,
    stateDir: o.stateDir ?? tempStateDir(),
  });
  await r.start();
  r.onEvent((e) => events.push(e));
  const sent = await r.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "Can you review the cache layer PR?",
  });
  if (sent.status !== "sent") throw new Error(`not sent: ${sent.error.code}`);
  return { r, discord, events, threadId: sent.threadId, mentionMessageId: sent.messageId };
}

let nextId = 1_400_000_000_000_100_000n;
function message(
  threadId: string,
  from: Agent | "human",
  content: string,
  mentions: Agent[],
): InboundDiscordMessage {
  nextId += 1n;
  return {
    messageId: nextId.toString(),
    channelId: threadId,
    threadId,
    authorId: from === "human" ? HUMAN : BOTS[from],
    authorIsBot: from !== "human",
    content,
    mentionUserIds: mentions.map((agent) => BOTS[agent]),
    ts: Date.now(),
  };
}

/** A bot that always has something new to say and asks back: no early ending applies. */
const chatty = (i: number) =>
  `Reply ${i}: I looked at part ${i * 13} of the change; what do you think about the ${["cache", "retry", "schema", "index"][i % 4]} side?`;

/** Two bots answering each other until the runtime stops handing their messages on. */
async function pingPong(r: A2ARuntime, threadId: string, first: Agent, withMentions: boolean, rounds = 20) {
  const decisions: PreflightResult[] = [];
  let speaker = first;
  for (let i = 0; i < rounds; i += 1) {
    const other: Agent = speaker === "ruda" ? "eden" : "ruda";
    const text = withMentions ? `<@${BOTS[other]}> ${chatty(i)}` : chatty(i);
    decisions.push(
      await r.handleDiscordMessage(message(threadId, speaker, text, withMentions ? [other] : [])),
    );
    speaker = other;
  }
  return decisions;
}

const handledCount = (decisions: PreflightResult[]) => decisions.filter((d) => d.action === "handle").length;
const endings = (events: A2AEvent[]) => events.filter((e) => e.type === "a2a.exchange.ended");

describe("createA2ARuntime: bot↔bot exchanges in a thread end", () => {
  it("two bots that always answer each other by mention: the discord_send mention, the answer and maxPingPongTurns turns, then turn_limit, before the loop guard", async () => {
    const { r, events, threadId } = await threadOpenedByDiscordSend({ maxPingPongTurns: 3 });
    // The runtime's own mention arrives first (it opens the exchange), then eden and ruda answer each other.
    const opening = await r.handleDiscordMessage(
      message(threadId, "ruda", `<@${BOTS.eden}> Can you review the cache layer PR?`, ["eden"]),
    );
    expect(opening).toMatchObject({ action: "handle", agentId: "eden" });
    const decisions = [opening, ...(await pingPong(r, threadId, "eden", true))];

    expect(handledCount(decisions)).toBe(4);
    expect(decisions.slice(0, 4).every((d) => d.action === "handle")).toBe(true);
    expect(decisions.slice(4)).toEqual(
      Array(decisions.length - 4).fill({ action: "drop", reason: "turn_limit" }),
    );
    expect(endings(events)).toEqual([
      expect.objectContaining({
        type: "a2a.exchange.ended",
        fromAgent: "ruda",
        toAgent: "eden",
        data: expect.objectContaining({
          threadId,
          reason: "turn_limit",
          handled: 4,
          limit: 4,
          agentId: "eden",
        }),
      }),
    ]);
  });

  it("with the default 5 turns, a human's opening: the exchange ends by turn_limit, never by the loop guard (6 per minute)", async () => {
    const { r, threadId } = await threadOpenedByDiscordSend({ maxPingPongTurns: 5 });
    const human = await r.handleDiscordMessage(
      message(threadId, "human", `<@${BOTS.ruda}> ask eden about the index`, ["ruda"]),
    );
    expect(human).toMatchObject({ action: "handle", agentId: "ruda" });
    const decisions = await pingPong(r, threadId, "ruda", true);
    // The human's message was the first of the 6; then 5 bot messages.
    expect(handledCount(decisions)).toBe(5);
    expect(
      decisions.filter((d) => d.action === "drop").map((d) => d.action === "drop" && d.reason),
    ).not.toContain("loop_guard");
  });

  it("two bots that always answer each other without mentions: nothing is handled, even for participants", async () => {
    const { r, events, threadId } = await threadOpenedByDiscordSend();
    const decisions = await pingPong(r, threadId, "eden", false, 5);
    expect(decisions).toEqual(Array(5).fill({ action: "observe" }));
    expect(endings(events)).toEqual([]);
  });

  it.each([
    ["Thanks, got it. I will merge it after lunch.", "conclusion_detected"],
    ["REPLY_SKIP", "explicit_skip"],
    ["ok", "minimal_content"],
  ])(
    "a turn saying %j ends the exchange early (%s): it and later messages are not handed on",
    async (text, reason) => {
      const { r, events, threadId } = await threadOpenedByDiscordSend({ maxPingPongTurns: 5 });
      const say = (from: Agent, content: string) =>
        r.handleDiscordMessage(
          message(threadId, from, `<@${BOTS[from === "ruda" ? "eden" : "ruda"]}> ${content}`, [
            from === "ruda" ? "eden" : "ruda",
          ]),
        );
      expect(await say("ruda", "Can you review the cache layer PR?")).toMatchObject({ action: "handle" });
      expect(await say("eden", chatty(1))).toMatchObject({ action: "handle" });
      expect(await say("ruda", text)).toEqual({ action: "drop", reason });
      expect(await say("eden", chatty(2))).toEqual({ action: "drop", reason });
      expect(endings(events).map((e) => e.type === "a2a.exchange.ended" && e.data)).toEqual([
        expect.objectContaining({ reason, handled: 2 }),
      ]);
    },
  );

  it("a human message starts a new exchange; so does a new discord_send into the thread", async () => {
    const { r, threadId } = await threadOpenedByDiscordSend({ maxPingPongTurns: 1 });
    expect(handledCount(await pingPong(r, threadId, "ruda", true, 4))).toBe(2);
    expect(
      await r.handleDiscordMessage(message(threadId, "eden", `<@${BOTS.ruda}> ${chatty(9)}`, ["ruda"])),
    ).toEqual({
      action: "drop",
      reason: "turn_limit",
    });

    await r.handleDiscordMessage(message(threadId, "human", "Let us go on after the standup.", []));
    expect(handledCount(await pingPong(r, threadId, "ruda", true, 4))).toBe(2);

    const again = await r.discordSend({
      fromAgentId: "seum",
      targetAgentId: "eden",
      message: "Also: the schema?",
      threadId,
    });
    expect(again.status).toBe("sent");
    expect(
      await r.handleDiscordMessage(message(threadId, "seum", `<@${BOTS.eden}> Also: the schema?`, ["eden"])),
    ).toMatchObject({ action: "handle", agentId: "eden" });
  });

  it("an ended exchange stays ended after a restart, and status shows why", async () => {
    const stateDir = tempStateDir();
    const first = await threadOpenedByDiscordSend({ maxPingPongTurns: 1, stateDir });
    await pingPong(first.r, first.threadId, "ruda", true, 3);
    await first.r.stop();

    const second = runtime({ config: config(1), discord: first.discord, stateDir });
    await second.start();
    expect(
      await second.handleDiscordMessage(
        message(first.threadId, "ruda", `<@${BOTS.eden}> ${chatty(5)}`, ["eden"]),
      ),
    ).toEqual({
      action: "drop",
      reason: "turn_limit",
    });
    await second.stop();

    const report = await collectStatus(stateDir, Date.now());
    expect(report.exchanges).toEqual([
      expect.objectContaining({ threadId: first.threadId, handled: 2, limit: 2, endedBy: "turn_limit" }),
    ]);
    const out: string[] = [];
    expect(await runStatus(["--state-dir", stateDir], { out: (line) => out.push(line), err: () => {} })).toBe(
      0,
    );
    expect(out).toContainEqual(
      expect.stringMatching(new RegExp(`^${first.threadId}\\s+2/2\\s+turn_limit\\s`)),
    );
  });

  it("a reminder Discord delivers before its post returns counts for nothing: its target handles it after the exchange ended", async () => {
    // Discord's gateway can hand a message to the bots before the REST call that posted it returns.
    const delivered: PreflightResult[] = [];
    const delivery: { to?: (m: InboundDiscordMessage) => Promise<PreflightResult> } = {};
    class EchoingDiscord extends FakeDiscord {
      override async sendMessage(p: Omit<SentMessage, "messageId">) {
        const posted = await super.sendMessage(p);
        const m = message(p.channelId, p.asAgentId as Agent, p.content, []);
        const echo = { ...m, messageId: posted.messageId, mentionUserIds: [...p.mentionUserIds] };
        if (delivery.to !== undefined) delivered.push(await delivery.to(echo));
        return posted;
      }
    }
    const r = runtime({ config: config(1), discord: new EchoingDiscord(), stateDir: tempStateDir() });
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "Can you review the cache layer PR?",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    // ruda and seum use up the thread's exchange; eden has not answered its mention.
    const say = (from: Agent, to: Agent, i: number) =>
      r.handleDiscordMessage(message(sent.threadId, from, `<@${BOTS[to]}> ${chatty(i)}`, [to]));
    expect([
      await say("ruda", "seum", 1),
      await say("seum", "ruda", 2),
      await say("ruda", "seum", 3),
    ]).toEqual([
      expect.objectContaining({ action: "handle" }),
      expect.objectContaining({ action: "handle" }),
      { action: "drop", reason: "turn_limit" },
    ]);

    delivery.to = (m) => r.handleDiscordMessage(m);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    await r.idle();
    expect(delivered).toEqual([expect.objectContaining({ action: "handle", agentId: "eden" })]);
    expect(await r.mentions()).toEqual([expect.objectContaining({ status: "reminded" })]);
  });
});
