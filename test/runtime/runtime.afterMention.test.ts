import { describe, expect, it } from "vitest";
import type { A2ARuntime } from "../../src/index.js";
import { readStateDir } from "../../src/persistence/index.js";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { BOTS, FakeDiscord, HUMAN, tempStateDir } from "../support/runtimeFakes.js";

// A mention waits for each timeout with XState's `after: { responseTimeout }`: stopped while it waits
// for its second reminder and started again, it stays a record until that delay is due, then reminds
// and escalates at the original times, once each, with the same texts.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;
const clocked = useClockedRuntimes();

function runtimeOn(stateDir: string, clock: ManualClock, discord: FakeDiscord) {
  /** When each actor was hosted (created or restored), by the test's clock. */
  const hostedAt: number[] = [];
  const { r, events } = clocked(stateDir, clock, {
    discord,
    inspect: (ev) => {
      if (ev.type === "@xstate.actor" && ev.actorRef.sessionId === ev.rootId) hostedAt.push(clock.now());
    },
  });
  return { r, events, hostedAt };
}

const reminderText = (n: number, minutes: number) =>
  `[리마인더 ${n}/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.\n원본: "코드 리뷰 해줘" (${minutes}분 전)`;
const escalationText = (minutes: number) =>
  [
    `⚠️ 응답 없음 (3회 시도, ${minutes}분 경과)`,
    `대상: <@${BOTS.eden}>`,
    '요청: "코드 리뷰 해줘"',
    `<@${HUMAN}> 확인 필요`,
  ].join("\n");

/** The mention's posts after the original: reminders and the escalation, in order. */
const followUps = (discord: FakeDiscord, threadId: string) =>
  discord.in(threadId).filter((m) => m.content.startsWith("[리마인더") || m.content.startsWith("⚠️"));

/** Time passes `ms`: the thread's `count`th follow-up is posted at the end of it, not 1 ms before. */
async function postedAfter(
  ms: number,
  clock: ManualClock,
  r: A2ARuntime,
  posts: () => number,
  count: number,
) {
  await clock.advance(ms - 1, () => r.idle());
  expect(posts()).toBe(count - 1);
  await clock.advance(1, () => r.idle());
  expect(posts()).toBe(count);
}

/** A mention sent at T0 and reminded once at T0 + 5 min; stopped at T0 + 7 min. */
async function stoppedAfterFirstReminder(stateDir: string) {
  const clock = new ManualClock(T0);
  const discord = new FakeDiscord();
  const { r } = runtimeOn(stateDir, clock, discord);
  await r.start();
  const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" });
  if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
  await clock.advance(5 * MINUTE, () => r.idle());
  expect(followUps(discord, sent.threadId)).toHaveLength(1);
  await clock.advance(2 * MINUTE, () => r.idle());
  await r.stop();
  return { sent, discord };
}

/** The discord of the first run, for the second: same threads, messages and ids. */
function continuing(discord: FakeDiscord): FakeDiscord {
  const next = new FakeDiscord();
  next.threads.push(...discord.threads);
  next.messages.push(...discord.messages);
  for (let i = 0; i < discord.messages.length + discord.threads.length; i += 1) next.nextId();
  return next;
}

describe("a mention stopped while it waits for its second reminder (an after delay)", () => {
  it("is stored with the delay's due time", async () => {
    const dir = tempStateDir();
    await stoppedAfterFirstReminder(dir);
    const { actors } = await readStateDir(dir);
    const record = actors.find((a) => a.record.machineId === "collaborate")?.record;
    expect(record?.delayed?.map((d) => [d.event.type, d.target, d.dueAt])).toEqual([
      ["xstate.after.responseTimeout.mention.reminded", ["mention"], T0 + 10 * MINUTE],
    ]);
  });

  it("started again before it is due: reminds at T0 + 10 min and escalates at T0 + 15 min, once each", async () => {
    const dir = tempStateDir();
    const first = await stoppedAfterFirstReminder(dir);
    const thread = first.sent.threadId;
    const clock = new ManualClock(T0 + 8 * MINUTE);
    const discord = continuing(first.discord);
    const { r, events, hostedAt } = runtimeOn(dir, clock, discord);
    await r.start();
    expect((await r.mentions()).map((m) => [m.status, m.attempts])).toEqual([["reminded", 2]]);

    const posts = () => followUps(discord, thread).length;
    await postedAfter(2 * MINUTE, clock, r, posts, 2);
    // Dormant until then: only its stored delay could wake it.
    expect(hostedAt).toEqual([T0 + 10 * MINUTE]);
    await postedAfter(5 * MINUTE, clock, r, posts, 3);

    // Nothing fires twice: an hour on, still two reminders and one escalation.
    await clock.advance(60 * MINUTE, () => r.idle());
    expect(followUps(discord, thread).map((m) => [m.content, m.mentionUserIds])).toEqual([
      [reminderText(1, 5), [BOTS.eden]],
      [reminderText(2, 10), [BOTS.eden]],
      [escalationText(15), [HUMAN]],
    ]);
    const timed = events.filter(
      (e) => e.type === "a2a.mention.reminded" || e.type === "a2a.mention.escalated",
    );
    expect(timed.map((e) => [e.type, e.ts])).toEqual([
      ["a2a.mention.reminded", T0 + 10 * MINUTE],
      ["a2a.mention.escalated", T0 + 15 * MINUTE],
    ]);
    expect((await r.mentions()).map((m) => [m.status, m.attempts])).toEqual([["escalated", 3]]);
  });

  it("started again after it was due: reminds at once, once; the text counts to the due time", async () => {
    const dir = tempStateDir();
    const first = await stoppedAfterFirstReminder(dir);
    const thread = first.sent.threadId;
    const clock = new ManualClock(T0 + 12 * MINUTE);
    const discord = continuing(first.discord);
    const { r } = runtimeOn(dir, clock, discord);
    await r.start();
    const posts = () => followUps(discord, thread).length;
    await r.idle();
    expect(posts()).toBe(2);
    // The escalation is a full timeout after the reminder's actual delivery (T0 + 12 min).
    await postedAfter(5 * MINUTE, clock, r, posts, 3);
    await clock.advance(60 * MINUTE, () => r.idle());
    expect(followUps(discord, thread).map((m) => m.content)).toEqual([
      reminderText(1, 5),
      reminderText(2, 10),
      escalationText(17),
    ]);
  });
});

describe("a mention stopped while its failed reminder waits for the retry (an after delay)", () => {
  it("started again before the retry is due: posts the reminder at that time, once, and goes on", async () => {
    const dir = tempStateDir();
    const clock = new ManualClock(T0);
    const discord = new FakeDiscord();
    const { r } = runtimeOn(dir, clock, discord);
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
    // Discord answers the first reminder 503: it is tried again 1 s later.
    discord.failures.push(Object.assign(new Error("Service Unavailable"), { status: 503 }));
    // The reminder's post starts once the snapshot that started it is on disk: idle() waits for both.
    await clock.advance(5 * MINUTE, () => r.idle());
    expect(discord.failures).toHaveLength(0);
    await r.stop();
    const { actors } = await readStateDir(dir);
    const record = actors.find((a) => a.record.machineId === "collaborate")?.record;
    expect(record?.delayed?.map((d) => [d.event.type, d.dueAt])).toEqual([
      ["xstate.after.retryDelay.mention.reminderRetrying", T0 + 5 * MINUTE + 1_000],
    ]);

    const again = new ManualClock(T0 + 5 * MINUTE + 500);
    const next = continuing(discord);
    const { r: restarted } = runtimeOn(dir, again, next);
    await restarted.start();
    const posts = () => followUps(next, sent.threadId).length;
    await postedAfter(500, again, restarted, posts, 1);
    // The next timeout counts from the reminder's delivery.
    await postedAfter(5 * MINUTE, again, restarted, posts, 2);
    await again.advance(MINUTE, () => restarted.idle());
    expect(followUps(next, sent.threadId).map((m) => m.content)).toEqual([
      reminderText(1, 5),
      reminderText(2, 10),
    ]);
  });
});
