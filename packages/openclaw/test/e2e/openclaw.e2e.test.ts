// The plugin in the real OpenClaw gateway (2026.9.6 on Node 24), installed from its packed tarball as a
// user installs it, with two Discord agents on the emulator and a scripted model:
//   (a) a human mentions ruda and OpenClaw answers (the harness works);
//   (b) ruda's model calls discord_send to eden: a thread with the mention; eden, mentioned by a bot
//       (which OpenClaw's own Discord channel drops), is run by the plugin and answers in the thread;
//       the mention ends responded and nothing reminds it;
//   (c) eden stays silent: reminders and the escalation pinging the human, each once, at their times;
//   (d) the gateway is SIGKILLed while a reminder is pending and started again: the reminder is posted
//       once, at its time;
//   (e) ruda's model calls a2a_send and eden's first run fails with a rate limit: retried after the
//       backoff, the flow ends ok; two agents that would answer each other forever stop at the turn limit;
//   (f) a bad plugin config costs the plugin only: the gateway and its Discord channel still run.
import type { EmulatedMessage } from "a2a-statecharts/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeModelRequest, FakeTurn } from "../../src/testing/index.js";
import { type Harness, startHarness } from "./support/harness.js";
import { IDS } from "./support/openclawConfig.js";

const URGENT_MS = 15_000; // (c): reminders at 15 s and 30 s, the escalation at 45 s
const NORMAL_MS = 120_000; // (d): longer than a gateway restart, so the reminder falls due after it
const MAX_TURNS = 2;
const PLUGIN_CONFIG = {
  channelId: IDS.channel,
  escalationUserId: IDS.human,
  responseTimeoutMs: NORMAL_MS,
  urgentResponseTimeoutMs: URGENT_MS,
  maxAttempts: 3,
  maxPingPongTurns: MAX_TURNS,
  locale: "en",
  blockCoreSessionsSend: true,
};

/** Every text the model was sent in a request (system prompt included). */
function allText(r: FakeModelRequest): string {
  return r.messages
    .map((m) =>
      typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(""),
    )
    .join("\n");
}
const isTurnPrompt = (r: FakeModelRequest): boolean => /Turn \d+ of \d+/.test(allText(r));
const isAnnouncePrompt = (r: FakeModelRequest): boolean =>
  /ANNOUNCE_SKIP/.test(allText(r)) && !isTurnPrompt(r);

const toolCall = (name: string, args: Record<string, unknown>): FakeTurn => ({
  toolCall: { name, arguments: args },
});

/** ruda: the human's requests become tool calls; in a2a_send's follow-up turns it ends or keeps asking. */
function ruda(r: FakeModelRequest): FakeTurn {
  const said = r.lastUserText ?? "";
  if (r.toolResults.length > 0) return { text: `Done: ${r.toolResults[0]?.content.slice(0, 300) ?? ""}` };
  if (isTurnPrompt(r)) {
    const turn = Number(/Turn (\d+) of/.exec(allText(r))?.[1] ?? 0);
    return /roadmap/.test(allText(r))
      ? { text: `Interesting point number ${turn}. What would you change about milestone ${turn * 7}?` }
      : { text: "REPLY_SKIP" };
  }
  if (/hello/i.test(said)) return { text: "ruda here: hello!" };
  if (/build/.test(said))
    return toolCall("discord_send", {
      targetAgentId: "eden",
      message: "Is the build green?",
      topicId: "build",
    });
  if (/logs/.test(said))
    return toolCall("discord_send", {
      targetAgentId: "eden",
      message: "Please send the logs.",
      topicId: "logs",
      urgent: true,
    });
  if (/review/.test(said))
    return toolCall("discord_send", {
      targetAgentId: "eden",
      message: "Please review the release notes.",
      topicId: "review",
    });
  if (/deploy/.test(said))
    return toolCall("a2a_send", {
      targetAgentId: "eden",
      message: "What is the deploy status?",
      timeoutSeconds: 0,
    });
  if (/roadmap/.test(said))
    return toolCall("a2a_send", {
      targetAgentId: "eden",
      message: "Let us discuss the roadmap for next quarter.",
      timeoutSeconds: 0,
    });
  return { text: "ruda: ok" };
}

let deployRefusals = 0;
/** eden: answers about the build; silent about logs and reviews; rate-limited once about the deploy. */
function eden(r: FakeModelRequest): FakeTurn {
  const text = allText(r);
  if (isAnnouncePrompt(r)) return { text: "ANNOUNCE_SKIP" };
  if (/roadmap/.test(text)) {
    const turn = Number(/Turn (\d+) of/.exec(text)?.[1] ?? 0);
    return { text: `Roadmap idea ${turn}: which team owns feature ${turn * 13}, and when?` };
  }
  if (/deploy status/.test(text)) {
    // A usage-limit 429: OpenClaw retries a short rate limit inside the run (up to 9 times, minutes),
    // but ends the run at this one, so the plugin's own retry is what answers it.
    if (deployRefusals === 0) {
      deployRefusals += 1;
      return {
        error: {
          status: 429,
          message: "Rate limit reached: usage limit for this key; retry after 2s",
          retryAfterSeconds: 2,
        },
      };
    }
    return { text: "The deploy finished at 10:00, all green." };
  }
  if (/build green/.test(text)) return { text: "Yes, the build is green." };
  return { silent: true };
}

/** When Discord stamped a message: its snowflake's time. */
const postedAt = (m: EmulatedMessage): number => Number(BigInt(m.id) >> 22n) + 1_420_070_400_000;

let h: Harness;
const thread =
  (topic: string): ((messages: EmulatedMessage[]) => EmulatedMessage | undefined) =>
  (messages) =>
    messages.find(
      (m) => m.authorId === IDS.bots.ruda && m.content.includes(topic) && m.channelId !== IDS.channel,
    );
const human = (content: string) =>
  h.emulator.postAsUser({
    userId: IDS.human,
    channelId: IDS.channel,
    content: `<@${IDS.bots.ruda}> ${content}`,
  });
const inThread = (threadId: string) => h.emulator.messages().filter((m) => m.channelId === threadId);

describe("the plugin in the real OpenClaw gateway", () => {
  beforeAll(async () => {
    h = await startHarness({
      script: [
        { agent: "ruda", turns: ruda },
        { agent: "eden", turns: eden },
      ],
      pluginConfig: PLUGIN_CONFIG,
    });
    await h.start();
  }, 600_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  it("(a) a human mentions ruda and OpenClaw answers as ruda's bot", async () => {
    await human("hello there");
    const answer = await h.waitForMessage(
      (ms) => ms.find((m) => m.authorId === IDS.bots.ruda && m.content.includes("ruda here: hello!")),
      60_000,
    );
    expect(answer.channelId).toBe(IDS.channel);
  }, 90_000);

  let review: EmulatedMessage;
  it("(d) a SIGKILL while a reminder is pending: after the restart it is posted once, at its time", async () => {
    await human("please ask eden for a review");
    review = await h.waitForMessage(thread("Please review the release notes."), 60_000);
    // The mention is durable once the tool answered the model (its result is in the next request).
    await h.model.waitForRequest(
      (r) => r.agentId === "ruda" && r.toolResults.some((t) => t.content.includes(review.channelId)),
      60_000,
    );
    await h.gateway.kill("SIGKILL");
    await h.start();
    const due = postedAt(review) + NORMAL_MS;
    const reminder = await h.waitForMessage(
      (ms) => ms.find((m) => m.channelId === review.channelId && m.content.startsWith("[Reminder 1/3]")),
      NORMAL_MS + 60_000,
    );
    expect(postedAt(reminder)).toBeGreaterThanOrEqual(due);
    expect(postedAt(reminder)).toBeLessThan(due + NORMAL_MS);
    expect(inThread(review.channelId).filter((m) => m.content.startsWith("[Reminder"))).toHaveLength(1);
  }, 600_000);

  it("(b) ruda's discord_send opens a thread; eden, mentioned by a bot, answers there; the mention ends responded", async () => {
    await human("ask eden whether the build is green");
    const mention = await h.waitForMessage(thread("Is the build green?"), 60_000);
    expect(mention.content).toContain(`<@${IDS.bots.eden}>`);
    const answer = await h.waitForMessage(
      (ms) => ms.find((m) => m.channelId === mention.channelId && m.authorId === IDS.bots.eden),
      60_000,
    );
    expect(answer.content).toBe("Yes, the build is green.");
    await expect
      .poll(
        () =>
          h
            .events()
            .filter((e) => e.type === "a2a.collaborate.responded")
            .map((e) => e.data.threadId),
        { timeout: 10_000 },
      )
      .toContain(mention.channelId);
    // (c) below waits past this mention's reminder time: it is checked there that none came.
    buildThread = mention.channelId;
  }, 120_000);

  let buildThread = "";
  it("(c) eden stays silent: two reminders and the escalation pinging the human, each once, at their times", async () => {
    await human("ask eden for the logs, urgently");
    const mention = await h.waitForMessage(thread("Please send the logs."), 60_000);
    const sentAt = postedAt(mention);
    const escalation = await h.waitForMessage(
      (ms) => ms.find((m) => m.channelId === mention.channelId && m.content.startsWith("⚠️ No response")),
      3 * URGENT_MS + 60_000,
    );
    expect(escalation.content).toContain(`<@${IDS.human}>`);
    expect(escalation.mentionIds ?? []).toContain(IDS.human);
    const posts = inThread(mention.channelId).filter((m) => m.authorId === IDS.bots.ruda);
    const at = (m: EmulatedMessage) => postedAt(m) - sentAt;
    const reminders = posts.filter((m) => m.content.startsWith("[Reminder"));
    expect(reminders.map((m) => m.content.slice(0, 14))).toEqual(["[Reminder 1/3]", "[Reminder 2/3]"]);
    for (const [i, m] of [...reminders, escalation].entries()) {
      expect(at(m)).toBeGreaterThanOrEqual((i + 1) * URGENT_MS);
      expect(at(m)).toBeLessThan((i + 2) * URGENT_MS);
    }
    expect(posts.filter((m) => m.content.startsWith("⚠️"))).toHaveLength(1);
    // (b)'s answered mention was never reminded.
    expect(inThread(buildThread).filter((m) => m.content.startsWith("[Reminder"))).toEqual([]);
  }, 300_000);

  it("(e) a2a_send: eden's rate-limited run is retried after the backoff and the flow ends ok", async () => {
    const before = h.events().filter((e) => e.type === "a2a.complete").length;
    await human("ask eden about the deploy");
    await expect
      .poll(() => h.events().filter((e) => e.type === "a2a.complete").length, {
        timeout: 120_000,
        interval: 500,
      })
      .toBeGreaterThan(before);
    const retries = h.events().filter((e) => e.type === "a2a.retry");
    expect(retries.map((e) => e.data.errorCode)).toContain("rate_limit");
    const complete = h
      .events()
      .filter((e) => e.type === "a2a.complete")
      .at(-1);
    expect(complete?.data).toMatchObject({ retryAttempts: 1, actualTurns: 1 });
    expect(complete?.data.errorCode).toBeUndefined();
    expect(deployRefusals).toBe(1);
  }, 180_000);

  it("(e) two agents that would answer each other forever stop at the turn limit", async () => {
    const before = h.events().filter((e) => e.type === "a2a.complete").length;
    await human("talk with eden about the roadmap");
    await expect
      .poll(() => h.events().filter((e) => e.type === "a2a.complete").length, {
        timeout: 180_000,
        interval: 500,
      })
      .toBeGreaterThan(before);
    const complete = h
      .events()
      .filter((e) => e.type === "a2a.complete")
      .at(-1);
    expect(complete?.data).toMatchObject({ terminationReason: "max_turns", actualTurns: MAX_TURNS });
  }, 240_000);

  it("(f) a bad plugin config: the gateway and OpenClaw's Discord channel start, the plugin logs the key at fault", async () => {
    await h.gateway.kill("SIGTERM");
    h.setPluginConfig({ ...PLUGIN_CONFIG, maxAttempts: 99 });
    await h.start({ plugin: false }); // OpenClaw acknowledged a mention: its Discord channel runs
    expect(h.gateway.log()).toMatch(/plugins\.entries\.a2a-statecharts\.config\.maxAttempts: Too big/);
    const before = h.emulator.messages(IDS.channel).length;
    await human("hello again");
    await h.waitForMessage(
      (ms) =>
        ms.slice(before).find((m) => m.authorId === IDS.bots.ruda && m.content.includes("ruda here: hello!")),
      60_000,
    );
  }, 400_000);
});
