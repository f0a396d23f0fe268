import { describe, expect, it } from "vitest";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { BOTS, CHANNEL, FakeDiscord, HUMAN, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

// The texts a collaboration posts (its thread's name and starter, the reminders, the escalation) are
// written in the configured locale, with the config's message overrides, by the runtime as it posts.

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;
const runtimeOn = useClockedRuntimes();
const request = { fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘", threadName: "리뷰" };

const expected = {
  ko: {
    threadName: "[협업] 루다 → 이든 · 리뷰",
    starter: "🧵 [협업] 루다 → 이든 · 리뷰",
    reminder: (n: number, minutes: number) =>
      `[리마인더 ${n}/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.\n원본: "코드 리뷰 해줘" (${minutes}분 전)`,
    escalation: `⚠️ 응답 없음 (3회 시도, 15분 경과)\n대상: <@${BOTS.eden}>\n요청: "코드 리뷰 해줘"\n<@${HUMAN}> 확인 필요`,
  },
  en: {
    threadName: "[Collab] 루다 → 이든 · 리뷰",
    starter: "🧵 [Collab] 루다 → 이든 · 리뷰",
    reminder: (n: number, minutes: number) =>
      `[Reminder ${n}/3] <@${BOTS.eden}> could you take a look at the request above?\n` +
      `Original: "코드 리뷰 해줘" (${minutes} min ago)`,
    escalation:
      `⚠️ No response (3 attempts, 15 min)\nTarget: <@${BOTS.eden}>\nRequest: "코드 리뷰 해줘"\n` +
      `<@${HUMAN}> Please take a look.`,
  },
};

async function sentIn(
  config: object,
  discord = new FakeDiscord(),
  clock = new ManualClock(T0),
  stateDir = tempStateDir(),
) {
  const { r } = runtimeOn(stateDir, clock, { discord, config: { ...runtimeConfig, ...config } });
  await r.start();
  const sent = await r.discordSend(request);
  if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
  const followUps = () => discord.in(sent.threadId).slice(1);
  /** Time passes to the next timeout: the follow-up it posts has landed. */
  const nextFollowUp = async (ms: number) => {
    const before = followUps().length;
    await clock.advance(ms, () => r.idle());
    expect(followUps()).toHaveLength(before + 1);
  };
  return { r, sent, discord, clock, stateDir, followUps, nextFollowUp };
}

describe("config.locale", () => {
  it.each(["ko", "en"] as const)(
    "%s: the thread's name and starter, the reminders 1/3 and 2/3 and the escalation",
    async (locale) => {
      const { sent, discord, followUps, nextFollowUp } = await sentIn({ locale });
      const texts = expected[locale];
      expect(discord.threads.map((t) => t.name)).toEqual([texts.threadName]);
      expect(discord.in(CHANNEL).map((m) => [m.content, m.mentionUserIds])).toEqual([[texts.starter, []]]);
      expect(discord.in(sent.threadId)[0]?.content).toBe(`<@${BOTS.eden}> 코드 리뷰 해줘`);

      await nextFollowUp(5 * MINUTE);
      await nextFollowUp(5 * MINUTE);
      await nextFollowUp(5 * MINUTE);
      expect(followUps().map((m) => [m.content, m.mentionUserIds])).toEqual([
        [texts.reminder(1, 5), [BOTS.eden]],
        [texts.reminder(2, 10), [BOTS.eden]],
        [texts.escalation, [HUMAN]],
      ]);
    },
  );

  it("is Korean when unset", async () => {
    const { followUps, nextFollowUp, discord } = await sentIn({});
    expect(discord.threads[0]?.name).toBe(expected.ko.threadName);
    await nextFollowUp(5 * MINUTE);
    expect(followUps()[0]?.content).toBe(expected.ko.reminder(1, 5));
  });

  it("applies to a live mention after a restart: started in Korean, reminded in English", async () => {
    const first = await sentIn({ locale: "ko" });
    await first.nextFollowUp(5 * MINUTE);
    await first.r.stop();

    const { r } = runtimeOn(first.stateDir, first.clock, {
      discord: first.discord,
      config: { ...runtimeConfig, locale: "en" },
    });
    await r.start();
    await first.clock.advance(5 * MINUTE, () => r.idle());
    expect(first.followUps().map((m) => m.content)).toEqual([
      expected.ko.reminder(1, 5),
      expected.en.reminder(2, 10),
    ]);
  });
});

describe("a failed collaboration's notice", () => {
  it("is posted in the configured language", async () => {
    const discord = new FakeDiscord();
    // The starter's post is refused: the collaboration fails and a human is told in the default channel.
    discord.failures.push(Object.assign(new Error("Missing Permissions"), { status: 403 }));
    const { r } = runtimeOn(tempStateDir(), new ManualClock(T0), {
      discord,
      config: { ...runtimeConfig, locale: "en" },
    });
    await r.start();
    expect(await r.discordSend(request)).toMatchObject({
      status: "rejected",
      error: { code: "discord_permission" },
    });
    await r.idle();
    expect(discord.in(CHANNEL).map((m) => [m.content, m.mentionUserIds])).toEqual([
      [
        [
          "⚠️ Collaboration failed: 루다 → 이든 (discord_permission)",
          `Where: <#${CHANNEL}>`,
          "Reason: Missing Permissions",
          'Request: "코드 리뷰 해줘"',
          `<@${HUMAN}> Please check the bot's permissions in the channel.`,
        ].join("\n"),
        [HUMAN],
      ],
    ]);
  });
});

describe("config.messages", () => {
  it("replaces single templates of the locale; the others stay the locale's", async () => {
    const { r, followUps, nextFollowUp, discord } = await sentIn({
      locale: "en",
      messages: {
        reminder: "{target} nudge {attempts}/{maxAttempts} after {minutes} min: {original}",
        collaborationThreadName: "{from} asks {to}: {topic}",
      },
    });
    expect(discord.threads[0]?.name).toBe("루다 asks 이든: 리뷰");
    expect(discord.in(CHANNEL)[0]?.content).toBe("🧵 루다 asks 이든: 리뷰");
    await nextFollowUp(5 * MINUTE);
    expect(followUps()[0]?.content).toBe(`<@${BOTS.eden}> nudge 1/3 after 5 min: 코드 리뷰 해줘`);
    await r.idle();
  });
});

describe("a flow's texts (sessionsSend)", () => {
  const noRetry = { session: { agentToAgent: { retry: { enabled: false } } } };

  it.each([
    [
      "ko",
      "실행 상태를 찾을 수 없음",
      "[outcome] blocked: 응답을 받지 못했습니다 (실행 상태를 찾을 수 없음)",
    ],
    ["en", "run not found", "[outcome] blocked: no reply received (run not found)"],
  ] as const)("%s: a blocked flow's error and outcome message", async (locale, error, outcome) => {
    const gateway = new ScriptedGateway({ "agent:eden:main": [{ waits: [{ status: "not_found" }] }] });
    const { r, events } = runtimeOn(tempStateDir(), new ManualClock(T0), {
      gateway,
      config: { ...runtimeConfig, ...noRetry, locale },
    });
    await r.start();
    const result = await r.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "status?",
      timeoutSeconds: 60,
    });
    expect(result).toMatchObject({ status: "blocked", error: { code: "session_not_found", message: error } });
    const response = events.find((e) => e.type === "a2a.response");
    expect(response?.data).toMatchObject({ outcome: "blocked", reply: outcome });
  });
});
