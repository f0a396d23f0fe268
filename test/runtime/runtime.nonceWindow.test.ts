import { describe, expect, it, vi } from "vitest";
import type { A2AEvent, DiscordPort, MentionSummary } from "../../src/index.js";
import {
  BOTS,
  CHANNEL,
  FakeDiscord,
  type SentMessage,
  tempStateDir,
  useRuntimeHarness,
  waitUntil,
} from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { textLogger } from "../../src/runtime/logger.js";

// Exactly once beyond Discord's nonce window: a post Discord accepted just before a crash, re-run by
// a restart later than the window, is found among the channel's recent messages and not made again.

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;
const WINDOW = 4 * MINUTE;

const runtime = useRuntimeHarness(T0);

type Post = Omit<SentMessage, "messageId">;

/**
 * FakeDiscord whose nonces expire after WINDOW (as Discord's do), and which can "crash" the gateway:
 * the post `crashOn` picks is accepted (it is in the channel) but never answered, so the runtime
 * never records it; the test then stops the runtime, as a crash would leave it.
 */
class CrashingDiscord extends FakeDiscord {
  crashOn: ((p: Post) => boolean) | undefined;
  /** Failures of the next recentMessages calls. */
  readonly readFailures: unknown[] = [];

  constructor() {
    super({ nonceWindow: { ms: WINDOW, now: () => Date.now() } });
  }

  override async sendMessage(p: Post) {
    const sent = await super.sendMessage(p);
    if (this.crashOn?.(p) !== true) return sent;
    this.crashOn = undefined;
    return new Promise<{ messageId: string }>(() => {});
  }

  override async recentMessages(p: { asAgentId: string; channelId: string; limit: number }) {
    const failure = this.readFailures.shift();
    if (failure === undefined) return super.recentMessages(p);
    this.recentCalls.push(p.channelId);
    throw failure;
  }
}

const isMention = (p: Post) => p.content.startsWith(`<@${BOTS.eden}>`);
const isFirstReminder = (p: Post) => p.content.startsWith("[리마인더 1/3]");
const isEscalation = (p: Post) => p.content.startsWith("⚠️");

const scenarios = {
  mention: {
    crashOn: isMention,
    timeoutsBefore: 0,
    after: { status: "pending", attempts: 1 },
  },
  reminder: {
    crashOn: isFirstReminder,
    timeoutsBefore: 1,
    after: { status: "reminded", attempts: 2 },
  },
  escalation: {
    crashOn: isEscalation,
    timeoutsBefore: 3,
    after: { status: "escalated", attempts: 3 },
  },
} as const;

/**
 * Sends a collaboration, lets its timeouts fire until the chosen post is accepted by Discord, then
 * "crashes" (stops the runtime before the post is recorded) and restarts `restartAfterMs` later.
 */
async function crashThenRestart(
  scenario: (typeof scenarios)[keyof typeof scenarios],
  restartAfterMs: number,
  discord: CrashingDiscord | (FakeDiscord & DiscordPort) = new CrashingDiscord(),
  onWarning: (message: string) => void = () => {},
) {
  const dir = tempStateDir();
  if (discord instanceof CrashingDiscord) discord.crashOn = scenario.crashOn;
  const first = runtime({ stateDir: dir, discord });
  await first.start();
  const sending = first.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "코드 리뷰 해줘",
  });
  sending.catch(() => undefined);
  for (let i = 0; i < scenario.timeoutsBefore; i += 1) {
    await first.idle();
    expect(discord.messages).toHaveLength(2 + i);
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
  }
  // Polled, not idle(): the "crashed" post is never answered, so it stays in flight for good.
  await waitUntil(() => discord.messages.some(scenario.crashOn), "the post Discord accepts");
  await first.stop();
  vi.setSystemTime(Date.now() + restartAfterMs);
  const second = runtime({ stateDir: dir, discord, logger: textLogger(onWarning) });
  await second.start();
  const settled = async () =>
    (await second.mentions()).some((m) => matches(m, scenario.after.status, scenario.after.attempts));
  await second.idle();
  expect(await settled(), `the mention ${scenario.after.status} after the restart`).toBe(true);
  return { posts: discord.messages.filter(scenario.crashOn), mentions: await second.mentions() };
}

function matches(m: MentionSummary, status: string, attempts: number): boolean {
  return m.status === status && m.attempts === attempts;
}

describe("a post accepted by Discord just before a crash", () => {
  it.each(Object.keys(scenarios) as Array<keyof typeof scenarios>)(
    "%s: re-run after twice the nonce window, it is found among the recent messages, not posted again",
    async (name) => {
      const discord = new CrashingDiscord();
      const { posts, mentions } = await crashThenRestart(scenarios[name], 2 * WINDOW, discord);
      expect(posts).toHaveLength(1);
      expect(mentions).toEqual([expect.objectContaining(scenarios[name].after)]);
      // One look at the channel the post went to, by the bot that posted it.
      expect(discord.recentCalls).toEqual([posts[0]?.channelId]);
    },
  );

  it.each(Object.keys(scenarios) as Array<keyof typeof scenarios>)(
    "%s: re-run within the nonce window, Discord's nonce suffices: no read of recent messages",
    async (name) => {
      const discord = new CrashingDiscord();
      const { posts } = await crashThenRestart(scenarios[name], WINDOW / 2, discord);
      expect(posts).toHaveLength(1);
      expect(discord.recentCalls).toEqual([]);
    },
  );

  it("a port without recentMessages posts again past the window, and says so", async () => {
    const crashing = new CrashingDiscord();
    const warnings: string[] = [];
    // The same Discord, minus the optional method.
    const withoutRecent = Object.assign(Object.create(crashing) as CrashingDiscord, {
      recentMessages: undefined,
    });
    const { posts } = await crashThenRestart(scenarios.mention, 2 * WINDOW, withoutRecent, (w) =>
      warnings.push(w),
    );
    expect(posts).toHaveLength(2);
    expect(warnings).toEqual([
      expect.stringMatching(/past Discord's nonce window.*no recentMessages.*twice/),
    ]);
  });

  it("a read that fails for now fails the post; its retry reads again and finds it", async () => {
    const discord = new CrashingDiscord();
    discord.readFailures.push(Object.assign(new Error("Internal Server Error"), { status: 500 }));
    const dir = tempStateDir();
    discord.crashOn = isMention;
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    first
      .discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" })
      .catch(() => undefined);
    // Polled, not idle(): the "crashed" post is never answered.
    await waitUntil(() => discord.messages.some(isMention), "the mention Discord accepts");
    await first.stop();
    vi.setSystemTime(Date.now() + 2 * WINDOW);
    const second = runtime({ stateDir: dir, discord });
    await second.start();
    await second.idle();
    expect(discord.recentCalls).toHaveLength(1);
    // Discord's 5xx: retried after 1 s.
    await vi.advanceTimersByTimeAsync(1_000);
    await second.idle();
    expect(await second.mentions()).toHaveLength(1);
    expect(discord.messages.filter(isMention)).toHaveLength(1);
    expect(discord.recentCalls).toHaveLength(2);
  });

  it("a read refused for good (403: no Read Message History) posts again, and says so", async () => {
    const discord = new CrashingDiscord();
    discord.readFailures.push(Object.assign(new Error("Missing Access"), { status: 403 }));
    const warnings: string[] = [];
    const { posts } = await crashThenRestart(scenarios.reminder, 2 * WINDOW, discord, (w) =>
      warnings.push(w),
    );
    expect(posts).toHaveLength(2);
    expect(warnings).toEqual([
      expect.stringMatching(/recent messages cannot be read \(Missing Access\).*twice/),
    ]);
  });

  it("another bot's message while the reminder is in flight does not make the post look younger", async () => {
    const discord = new CrashingDiscord();
    const dir = tempStateDir();
    discord.crashOn = isFirstReminder;
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    // Polled, not idle(): the "crashed" reminder is never answered.
    await waitUntil(() => discord.messages.some(isFirstReminder), "the reminder Discord accepts");
    const firstTry = Date.now();
    // A minute later, while the reminder's answer is still awaited, seum speaks in the thread.
    vi.setSystemTime(firstTry + MINUTE);
    await first.handleDiscordMessage({
      messageId: "1400000000000000950",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.seum,
      authorIsBot: true,
      content: "저도 볼게요",
      mentionUserIds: [],
      ts: Date.now(),
    });
    await first.stop();
    // Past the window counted from the first try, within it counted from seum's message.
    vi.setSystemTime(firstTry + WINDOW + MINUTE / 2);
    const second = runtime({ stateDir: dir, discord });
    await second.start();
    await second.idle();
    expect((await second.mentions())[0]?.status).toBe("reminded");
    expect(discord.messages.filter(isFirstReminder)).toHaveLength(1);
  });

  it("an identical message from the bot before the post's first try is not taken for it", async () => {
    const discord = new CrashingDiscord();
    // The same starter text, posted by the same bot an hour before (another collaboration's).
    await discord.sendMessage({
      asAgentId: "ruda",
      channelId: CHANNEL,
      content: "",
      mentionUserIds: [],
      nonce: "older",
    });
    vi.setSystemTime(T0 + 60 * MINUTE);
    const dir = tempStateDir();
    discord.crashOn = (p) => p.channelId === CHANNEL;
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    first
      .discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" })
      .catch(() => undefined);
    // Polled, not idle(): the "crashed" starter is never answered.
    await waitUntil(() => discord.in(CHANNEL).length === 2, "the starter");
    const starter = discord.in(CHANNEL)[1];
    // The earlier message now reads the same as the starter: only its time tells them apart.
    const older = discord.messages[0];
    if (older === undefined || starter === undefined) throw new Error("no messages");
    older.content = starter.content;
    discord.messages.splice(discord.messages.indexOf(starter), 1);
    await first.stop();
    vi.setSystemTime(Date.now() + 2 * WINDOW);
    const second = runtime({ stateDir: dir, discord });
    await second.start();
    await second.idle();
    expect(await second.mentions()).toHaveLength(1);
    // The older look-alike was not taken: the starter was posted (again) and its thread opened from it.
    expect(discord.in(CHANNEL)).toHaveLength(2);
    expect(discord.threads[0]?.threadId).toBe(discord.in(CHANNEL)[1]?.messageId);
  });

  it("an announcement: re-run after twice the nonce window, it is found and the flow completes announced", async () => {
    const announcement = "eden이 배포를 확인했습니다.";
    const discord = new CrashingDiscord();
    discord.crashOn = (p) => p.content === announcement;
    const dir = tempStateDir();
    const gateway = () =>
      new ScriptedGateway({ "agent:eden:main": ["확인했습니다, 배포 문제 없습니다.", announcement] });
    const first = runtime({ stateDir: dir, gateway: gateway(), discord });
    await first.start();
    first
      .sessionsSend({
        requesterSessionKey: "agent:ruda:main",
        targetSessionKey: "agent:eden:main",
        message: "[NOTIFICATION] 배포 끝났어요",
        announceTarget: { channel: "discord", to: `channel:${CHANNEL}` },
        timeoutSeconds: 60,
      })
      .catch(() => undefined);
    // Polled, not idle(): the "crashed" announcement is never answered.
    await waitUntil(() => discord.in(CHANNEL).length === 1, "the announcement Discord accepts");
    await first.stop();
    vi.setSystemTime(Date.now() + 2 * WINDOW);
    const second = runtime({ stateDir: dir, gateway: gateway(), discord });
    const events: A2AEvent[] = [];
    second.onEvent((e) => events.push(e));
    await second.start();
    await second.idle();
    expect(events.filter((e) => e.type === "a2a.complete")).toHaveLength(1);
    expect(discord.in(CHANNEL).map((m) => m.content)).toEqual([announcement]);
    expect(discord.recentCalls).toEqual([CHANNEL]);
    expect(events.find((e) => e.type === "a2a.complete")?.data).toMatchObject({ announced: true });
  });
});
