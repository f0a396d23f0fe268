import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { A2AEventSchema, type MentionInput, mentionMachine } from "../../src/index.js";
import { MachineInputError } from "../../src/machines/MachineInputError.js";
import { VirtualClock } from "../../src/testing/index.js";
import type { MentionContext } from "../../src/machines/index.js";
import {
  type Clock,
  discordApiError,
  elapse,
  emittedEvents,
  fakePost,
  httpError,
  IDS,
  MINUTE,
  postingAt,
  rateLimitError,
  SECOND,
  snowflakeAt,
  T0,
  type RecordedPost,
} from "../support/discordFakes.js";

// The mention lifecycle: reminders by the requester's bot at each timeout counted from the latest
// delivery, then one escalation to a human; the target's answer ends it. Time is what the test says:
// the machine's `after` delays run on a simulated clock the test moves, as the runtime's clock would.

const TARGET = IDS.targetBot;
const HUMAN = IDS.human;

const base: MentionInput = {
  mentionId: "collab-1",
  threadId: IDS.mentionThread,
  messageId: snowflakeAt(T0),
  fromAgentId: "ruda",
  targetAgentId: "eden",
  targetBotId: TARGET,
  originalText: "코드 리뷰 해줘",
  responseTimeoutMs: 300_000,
  urgentResponseTimeoutMs: 60_000,
  maxAttempts: 3,
  escalationMentionId: HUMAN,
  notifyOnFailure: true,
  sentAt: T0,
};

type PostFake = ReturnType<typeof fakePost>;

/** Lets every settled fake's done event reach the actors: promise ticks only, no timer. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function startMention(
  overrides: Partial<MentionInput> = {},
  fakes: { reminder?: (clock: Clock) => PostFake; escalation?: (clock: Clock) => PostFake } = {},
) {
  const clock = new VirtualClock(T0);
  const reminders = fakes.reminder?.(clock) ?? postingAt(clock, "reminder");
  const escalations = fakes.escalation?.(clock) ?? postingAt(clock, "escalation");
  const emitted = emittedEvents();
  const actor = createActor(
    mentionMachine.provide({ actors: { postReminder: reminders.logic, postEscalation: escalations.logic } }),
    { input: { ...base, ...overrides }, inspect: emitted.inspect, clock },
  );
  actor.start();
  const context = (): MentionContext => actor.getSnapshot().context;
  /** Time passes to `at`: each delay due by then (a timeout, a post's retry) fires on the way. */
  const advanceTo = async (at: number) => {
    clock.moveTo(at);
    await settle();
  };
  /** Time passes to when the pending delay is due. */
  const fireDue = () => advanceTo(clock.nextDue() ?? Number.NaN);
  const answer = async (authorId: string, at: number) => {
    clock.moveTo(Math.max(clock.now(), at));
    actor.send({ type: "RESPONSE_RECEIVED", authorId, at, messageId: snowflakeAt(at) });
    await settle();
  };
  return { actor, clock, reminders, escalations, emitted, context, advanceTo, fireDue, answer };
}

function reminderText(n: number, minutes: number, original = "코드 리뷰 해줘"): string {
  return `[리마인더 ${n}/3] <@${TARGET}> 위 요청에 대해 확인 부탁해요.\n원본: "${original}" (${minutes}분 전)`;
}

/** Every `<@id>` a text contains, in order. */
function mentionsIn(text: string): string[] {
  return [...text.matchAll(/<@!?(\d+)>/g)].map((m) => m[1] ?? "");
}

describe("no answer → two reminders → escalation", () => {
  it("reminds at 5 and 10 minutes and escalates to the human at 15, with the defaults", async () => {
    const m = startMention();
    expect(m.actor.getSnapshot().value).toBe("pending");
    expect(m.clock.nextDue()).toBe(T0 + 5 * MINUTE);

    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toHaveLength(1);
    const first = m.reminders.inputs[0] as RecordedPost;
    expect(first).toMatchObject({
      asAgentId: "ruda",
      channelId: IDS.mentionThread,
      content: reminderText(1, 5),
      mentionUserIds: [TARGET],
    });
    expect(m.context().attempts).toBe(2);
    expect(m.clock.nextDue()).toBe(T0 + 10 * MINUTE);

    await m.advanceTo(T0 + 10 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toHaveLength(2);
    const second = m.reminders.inputs[1] as RecordedPost;
    expect(second).toMatchObject({
      asAgentId: "ruda",
      channelId: IDS.mentionThread,
      content: reminderText(2, 10),
      mentionUserIds: [TARGET],
    });
    expect(m.context().attempts).toBe(3);
    expect(m.clock.nextDue()).toBe(T0 + 15 * MINUTE);
    expect(m.escalations.inputs).toHaveLength(0);

    await m.advanceTo(T0 + 15 * MINUTE);
    const snapshot = m.actor.getSnapshot();
    expect(snapshot.value).toBe("escalated");
    expect(snapshot.status).toBe("done");
    expect(snapshot.output).toMatchObject({ status: "escalated", attempts: 3 });
    expect(m.clock.nextDue()).toBeUndefined();
    expect(m.reminders.inputs).toHaveLength(2);
    expect(m.escalations.inputs).toHaveLength(1);
    const escalation = m.escalations.inputs[0] as RecordedPost;
    expect(escalation.asAgentId).toBe("ruda");
    expect(escalation.channelId).toBe(IDS.mentionThread);
    // The escalation text, with Discord mentions for @이든 and @병욱.
    expect(escalation.content).toBe(
      [
        "⚠️ 응답 없음 (3회 시도, 15분 경과)",
        `대상: <@${TARGET}>`,
        '요청: "코드 리뷰 해줘"',
        `<@${HUMAN}> 확인 필요`,
      ].join("\n"),
    );
    // The human is pinged; the target is named but not pinged.
    expect(escalation.mentionUserIds).toEqual([HUMAN]);

    // Each post has its own nonce key, so a re-run posts each once.
    const keys = [first.nonceKey, second.nonceKey, escalation.nonceKey];
    expect(new Set(keys).size).toBe(3);

    const events = m.emitted.parsed();
    expect(events.map((e) => e.type)).toEqual([
      "a2a.mention.reminded",
      "a2a.mention.reminded",
      "a2a.mention.escalated",
    ]);
    for (const e of events) expect(A2AEventSchema.safeParse(e).success).toBe(true);
    expect(events.map((e) => e.ts)).toEqual([T0 + 5 * MINUTE, T0 + 10 * MINUTE, T0 + 15 * MINUTE]);
    expect(events.map((e) => e.data.elapsedMinutes)).toEqual([5, 10, 15]);
    for (const e of events) {
      expect(e).toMatchObject({ fromAgent: "ruda", toAgent: "eden" });
      expect(e.data).toMatchObject({
        mentionId: "collab-1",
        threadId: IDS.mentionThread,
        targetAgentId: "eden",
      });
    }
    expect(events[2]?.data).toMatchObject({ escalationMentionId: HUMAN, notified: true, maxAttempts: 3 });
  });

  it("quotes a long or multi-line original on one line, cut", async () => {
    const long = `첫 줄\n${"가".repeat(800)}`;
    const m = startMention({ originalText: long });
    await m.fireDue();
    const content = (m.reminders.inputs[0] as RecordedPost).content;
    expect(content.startsWith(`[리마인더 1/3] <@${TARGET}>`)).toBe(true);
    expect(content.split("\n")).toHaveLength(2);
    expect(content).toContain('원본: "첫 줄 가가');
    expect(content.length).toBeLessThan(2000);
  });
});

describe("each timeout counts from the actual delivery", () => {
  it("a reminder posted late moves the next due to its delivery time + the timeout", async () => {
    const m = startMention(
      {},
      {
        // The first reminder reaches Discord 90 s after it fired.
        reminder: (clock) =>
          fakePost((_, call) => {
            if (call === 1) elapse(clock, 90 * SECOND);
            return { ok: { messageId: `reminder-${call}`, at: clock.now() } };
          }),
      },
    );
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.context().lastDeliveredAt).toBe(T0 + 6.5 * MINUTE);
    expect(m.clock.nextDue()).toBe(T0 + 11.5 * MINUTE);

    // At the naive 10-minute mark nothing is due yet.
    await m.advanceTo(T0 + 10 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toHaveLength(1);

    await m.advanceTo(T0 + 11.5 * MINUTE);
    expect(m.reminders.inputs).toHaveLength(2);
    expect(m.reminders.inputs[1]?.content).toBe(reminderText(2, 11));
    expect(m.clock.nextDue()).toBe(T0 + 16.5 * MINUTE);
    const reminded = m.emitted.ofType("a2a.mention.reminded");
    expect(reminded.map((e) => e.ts)).toEqual([T0 + 6.5 * MINUTE, T0 + 11.5 * MINUTE]);
  });

  it("does nothing before the due time", async () => {
    const m = startMention();
    await m.advanceTo(T0 + 5 * MINUTE - 1);
    expect(m.actor.getSnapshot().value).toBe("pending");
    expect(m.context()).toMatchObject({ attempts: 1 });
    expect(m.reminders.inputs).toHaveLength(0);

    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE - 1);
    expect(m.reminders.inputs).toHaveLength(1);
    expect(m.actor.getSnapshot().value).toBe("reminded");
  });

  it("a timeout that fires late reminds once, counts its minutes to the due time, and waits a full timeout", async () => {
    const m = startMention();
    await m.advanceTo(T0 + 25 * MINUTE);
    expect(m.reminders.inputs).toHaveLength(1);
    // The text says when it was due, so a post re-run after a crash has the same content.
    expect(m.reminders.inputs[0]?.content).toBe(reminderText(1, 5));
    expect(m.context()).toMatchObject({ attempts: 2, firedAt: T0 + 5 * MINUTE });
    expect(m.clock.nextDue()).toBe(T0 + 30 * MINUTE);
    expect(m.escalations.inputs).toHaveLength(0);
  });

  it("a reminder that failed to post is tried again with the same nonce, without counting an attempt", async () => {
    const m = startMention(
      {},
      {
        reminder: (clock) =>
          fakePost((_, call) =>
            call === 1
              ? { fail: httpError(503, clock.now()) }
              : { ok: { messageId: `r-${call}`, at: clock.now() } },
          ),
      },
    );
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.context().attempts).toBe(1);
    expect(m.emitted.ofType("a2a.mention.reminded")).toHaveLength(0);
    const retryAt = m.clock.nextDue() ?? Number.NaN;
    expect(retryAt).toBe(T0 + 5 * MINUTE + SECOND);
    await m.fireDue();
    expect(m.reminders.inputs).toHaveLength(2);
    expect(m.reminders.inputs[1]?.nonceKey).toBe(m.reminders.inputs[0]?.nonceKey);
    expect(m.reminders.inputs[1]?.content.startsWith(`[리마인더 1/3] <@${TARGET}>`)).toBe(true);
    expect(m.context().attempts).toBe(2);
    expect(m.clock.nextDue()).toBe(retryAt + 5 * MINUTE);
  });
});

describe("failed reminder and escalation posts", () => {
  /** A post fake that fails the listed calls (1-based) with `fail(at)`, `CALL_MS` after it started. */
  const CALL_MS = 300;
  const failing = (calls: Record<number, (at: number) => unknown>, prefix: string) => (clock: Clock) =>
    fakePost((_, call) => {
      const fail = calls[call];
      if (fail === undefined) return { ok: { messageId: `${prefix}-${call}`, at: clock.now() } };
      elapse(clock, CALL_MS);
      return { fail: fail(clock.now()) };
    });
  const reachEscalation = async (m: ReturnType<typeof startMention>) => {
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE);
    await m.advanceTo(T0 + 15 * MINUTE);
  };

  it("an escalation answered 429 then 503 waits Retry-After, then 2 s, and pings the human once", async () => {
    const m = startMention(
      {},
      {
        escalation: failing(
          { 1: (at) => rateLimitError(2_500, at), 2: (at) => httpError(503, at) },
          "escalation",
        ),
      },
    );
    await reachEscalation(m);
    expect(m.actor.getSnapshot().value).toBe("escalationRetrying");
    expect(m.clock.nextDue()).toBe(T0 + 15 * MINUTE + CALL_MS + 2_500);
    // Not escalated yet: nobody has been told.
    expect(m.emitted.ofType("a2a.mention.escalated")).toEqual([]);
    expect(m.escalations.inputs).toHaveLength(1);
    await m.fireDue();
    expect(m.actor.getSnapshot().value).toBe("escalationRetrying");
    expect(m.clock.nextDue()).toBe(m.clock.now() + 2 * SECOND);
    await m.fireDue();
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.escalations.inputs).toHaveLength(3);
    expect(new Set(m.escalations.inputs.map((p) => p.nonceKey)).size).toBe(1);
    expect(new Set(m.escalations.inputs.map((p) => p.content)).size).toBe(1);
    expect(m.escalations.inputs[2]?.mentionUserIds).toEqual([HUMAN]);
    const escalated = m.emitted.parsed().filter((e) => e.type === "a2a.mention.escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.data).toMatchObject({ notified: true, elapsedMinutes: 15 });
    expect(escalated[0]?.data).not.toHaveProperty("errorCode");
  });

  it("an escalation Discord keeps failing ends escalated with notified false and the error, after three retries", async () => {
    const fail503 = (at: number) => httpError(503, at);
    const m = startMention(
      {},
      { escalation: failing({ 1: fail503, 2: fail503, 3: fail503, 4: fail503 }, "escalation") },
    );
    await reachEscalation(m);
    const waits: number[] = [];
    while (m.actor.getSnapshot().value === "escalationRetrying") {
      waits.push((m.clock.nextDue() ?? Number.NaN) - m.clock.now());
      await m.fireDue();
    }
    expect(waits).toEqual([SECOND, 2 * SECOND, 4 * SECOND]);
    expect(m.escalations.inputs).toHaveLength(4);
    expect(m.actor.getSnapshot().output?.status).toBe("escalated");
    const escalated = m.emitted.parsed().filter((e) => e.type === "a2a.mention.escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.ts).toBe(m.clock.now());
    expect(escalated[0]?.data).toMatchObject({
      notified: false,
      failedPost: "escalation",
      errorCode: "discord_unavailable",
      errorMessage: expect.any(String),
    });
  });

  it("an escalation refused with 403 is not retried: escalated, notified false, discord_permission", async () => {
    const m = startMention(
      {},
      { escalation: failing({ 1: (at) => discordApiError(403, at) }, "escalation") },
    );
    await reachEscalation(m);
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.escalations.inputs).toHaveLength(1);
    expect(m.emitted.ofType("a2a.mention.escalated")[0]?.data).toMatchObject({
      notified: false,
      failedPost: "escalation",
      errorCode: "discord_permission",
      errorMessage: "Missing Permissions",
    });
  });

  it("a reminder answered 429 is tried again after Retry-After, not a fixed minute", async () => {
    const m = startMention({}, { reminder: failing({ 1: (at) => rateLimitError(1_500, at) }, "reminder") });
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.clock.nextDue()).toBe(T0 + 5 * MINUTE + CALL_MS + 1_500);
    await m.fireDue();
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toHaveLength(2);
    expect(m.context().attempts).toBe(2);
  });

  it("a reminder refused with 404 calls the human at once, saying why", async () => {
    const m = startMention({}, { reminder: failing({ 1: (at) => discordApiError(404, at) }, "reminder") });
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.reminders.inputs).toHaveLength(1);
    expect(m.escalations.inputs[0]?.content.split("\n")[0]).toBe("⚠️ 응답 없음 (1회 시도, 5분 경과)");
    expect(m.emitted.ofType("a2a.mention.reminded")).toEqual([]);
    expect(m.emitted.ofType("a2a.mention.escalated")[0]?.data).toMatchObject({
      notified: true,
      failedPost: "reminder",
      errorCode: "discord_not_found",
    });
  });

  it("a reminder still failing after its retries escalates; with notifyOnFailure false, silently", async () => {
    const fail = (at: number) => httpError(502, at);
    const m = startMention(
      { notifyOnFailure: false },
      { reminder: failing({ 1: fail, 2: fail, 3: fail, 4: fail }, "reminder") },
    );
    await m.advanceTo(T0 + 5 * MINUTE);
    while (m.actor.getSnapshot().value === "reminderRetrying") await m.fireDue();
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.reminders.inputs).toHaveLength(4);
    expect(new Set(m.reminders.inputs.map((p) => p.nonceKey)).size).toBe(1);
    expect(m.escalations.inputs).toEqual([]);
    expect(m.emitted.ofType("a2a.mention.escalated")[0]?.data).toMatchObject({
      notified: false,
      failedPost: "reminder",
      errorCode: "discord_unavailable",
    });
  });

  it("the target's answer while an escalation waits to be retried ends it responded, and nothing is posted", async () => {
    const m = startMention({}, { escalation: failing({ 1: (at) => httpError(500, at) }, "escalation") });
    await reachEscalation(m);
    expect(m.actor.getSnapshot().value).toBe("escalationRetrying");
    await m.answer(TARGET, T0 + 15 * MINUTE + 500);
    expect(m.actor.getSnapshot().value).toBe("responded");
    expect(m.clock.nextDue()).toBeUndefined();
    expect(m.escalations.inputs).toHaveLength(1);
    expect(m.emitted.ofType("a2a.mention.escalated")).toEqual([]);
  });
});

describe("the target's answer", () => {
  const hang = () => fakePost(() => "hang");

  it("ends a pending mention responded", async () => {
    const m = startMention();
    await m.answer(TARGET, T0 + 2 * MINUTE);
    const snapshot = m.actor.getSnapshot();
    expect(snapshot.value).toBe("responded");
    expect(snapshot.output).toEqual({ status: "responded", attempts: 1, respondedAt: T0 + 2 * MINUTE });
    expect(m.clock.nextDue()).toBeUndefined();
    expect(m.reminders.inputs).toHaveLength(0);
  });

  it("ends a mention whose reminder is being posted responded", async () => {
    const m = startMention({}, { reminder: hang });
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("reminding");
    await m.answer(TARGET, T0 + 5 * MINUTE + 1);
    expect(m.actor.getSnapshot().value).toBe("responded");
    expect(m.actor.getSnapshot().output?.status).toBe("responded");
  });

  it("ends a reminded mention responded", async () => {
    const m = startMention();
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE);
    await m.answer(TARGET, T0 + 12 * MINUTE);
    expect(m.actor.getSnapshot().output).toEqual({
      status: "responded",
      attempts: 3,
      respondedAt: T0 + 12 * MINUTE,
    });
    // Nothing is left to time out.
    expect(m.clock.nextDue()).toBeUndefined();
    expect(m.escalations.inputs).toHaveLength(0);
  });

  it("ends a mention whose escalation is being posted responded, and no escalation event follows", async () => {
    const m = startMention({}, { escalation: hang });
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE);
    await m.advanceTo(T0 + 15 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("escalating");
    await m.answer(TARGET, T0 + 15 * MINUTE + 1);
    expect(m.actor.getSnapshot().value).toBe("responded");
    expect(m.emitted.ofType("a2a.mention.escalated")).toHaveLength(0);
  });

  it.each([
    ["another agent's bot", IDS.otherBot, T0 + 2 * MINUTE],
    ["the human", HUMAN, T0 + 2 * MINUTE],
    ["the requester's side (an unknown author)", "1400000000000000555", T0 + 2 * MINUTE],
    ["the target, before the mention was sent", TARGET, T0 - 1],
  ])("a message from %s does not end it", async (_label, authorId, at) => {
    const m = startMention();
    const before = m.context();
    await m.answer(authorId, at);
    expect(m.actor.getSnapshot().value).toBe("pending");
    expect(m.context()).toEqual(before);
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.answer(authorId, at);
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toHaveLength(1);
  });
});

describe("urgent, notifyOnFailure and escalationMentionId", () => {
  it("an urgent mention times out after urgentResponseTimeoutMs", async () => {
    const m = startMention({ urgent: true });
    expect(m.clock.nextDue()).toBe(T0 + MINUTE);
    await m.advanceTo(T0 + MINUTE);
    expect(m.reminders.inputs[0]?.content).toBe(reminderText(1, 1));
    expect(m.clock.nextDue()).toBe(T0 + 2 * MINUTE);
    await m.advanceTo(T0 + 2 * MINUTE);
    await m.advanceTo(T0 + 3 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.escalations.inputs[0]?.content.split("\n")[0]).toBe("⚠️ 응답 없음 (3회 시도, 3분 경과)");
  });

  it("notifyOnFailure false escalates silently: no post, and the event says notified false", async () => {
    const m = startMention({ notifyOnFailure: false });
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE);
    await m.advanceTo(T0 + 15 * MINUTE);
    const snapshot = m.actor.getSnapshot();
    expect(snapshot.value).toBe("escalated");
    expect(snapshot.output?.status).toBe("escalated");
    expect(m.reminders.inputs).toHaveLength(2);
    expect(m.escalations.inputs).toHaveLength(0);
    const escalated = m.emitted.parsed().filter((e) => e.type === "a2a.mention.escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.data).toMatchObject({ notified: false, elapsedMinutes: 15 });
  });

  it("without escalationMentionId the escalation pings nobody and names nobody to check", async () => {
    const m = startMention({ escalationMentionId: undefined });
    await m.advanceTo(T0 + 5 * MINUTE);
    await m.advanceTo(T0 + 10 * MINUTE);
    await m.advanceTo(T0 + 15 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("escalated");
    const escalation = m.escalations.inputs[0] as RecordedPost;
    expect(escalation.mentionUserIds).toEqual([]);
    expect(escalation.content.split("\n")[0]).toBe("⚠️ 응답 없음 (3회 시도, 15분 경과)");
    // Only the target is named (as the subject); no one is asked to check.
    expect(mentionsIn(escalation.content)).toEqual([TARGET]);
    expect(escalation.content).not.toContain(HUMAN);
    const escalated = m.emitted.ofType("a2a.mention.escalated")[0];
    expect(escalated?.data).not.toHaveProperty("escalationMentionId");
  });

  it("maxAttempts 1 escalates at the first timeout, without a reminder", async () => {
    const m = startMention({ maxAttempts: 1 });
    await m.advanceTo(T0 + 5 * MINUTE);
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.reminders.inputs).toHaveLength(0);
    expect(m.escalations.inputs[0]?.content.split("\n")[0]).toBe("⚠️ 응답 없음 (1회 시도, 5분 경과)");
  });
});

describe("reminders off (discord.a2aRetry.enabled false)", () => {
  it("arms no timeout: the mention waits untimed, and posts nothing however long", async () => {
    const m = startMention({ enabled: false });
    expect(m.actor.getSnapshot().value).toBe("untimed");
    expect(m.clock.nextDue()).toBeUndefined();
    for (const at of [T0 + 5 * MINUTE, T0 + 15 * MINUTE, T0 + 24 * 60 * MINUTE]) await m.advanceTo(at);
    expect(m.actor.getSnapshot().value).toBe("untimed");
    expect(m.context()).toMatchObject({ attempts: 1, lastDeliveredAt: T0 });
    expect(m.reminders.inputs).toHaveLength(0);
    expect(m.escalations.inputs).toHaveLength(0);
    expect(m.emitted.parsed()).toEqual([]);
  });

  it("the target's answer still ends it responded; others' messages do not", async () => {
    const m = startMention({ enabled: false, maxAttempts: 1 });
    await m.answer(IDS.otherBot, T0 + 20 * MINUTE);
    await m.answer(TARGET, T0 - 1);
    expect(m.actor.getSnapshot().value).toBe("untimed");
    await m.answer(TARGET, T0 + 20 * MINUTE);
    expect(m.actor.getSnapshot().output).toEqual({
      status: "responded",
      attempts: 1,
      respondedAt: T0 + 20 * MINUTE,
    });
  });

  it("a cancel ends it cancelled", async () => {
    const m = startMention({ enabled: false });
    m.actor.send({ type: "CANCEL", at: T0 + MINUTE });
    await settle();
    expect(m.actor.getSnapshot().output).toEqual({ status: "cancelled", attempts: 1 });
  });
});

describe("bad input: the mention fails at creation, naming the field", () => {
  const { mentionId: _mentionId, ...noMentionId } = base;
  const { targetBotId: _targetBotId, ...noTargetBotId } = base;
  const { sentAt: _sentAt, ...noSentAt } = base;
  const { originalText: _originalText, ...noOriginalText } = base;
  const cases: Array<[string, unknown, string]> = [
    ["mentionId missing", noMentionId, "mentionId"],
    ["targetBotId missing", noTargetBotId, "targetBotId"],
    ["sentAt missing", noSentAt, "sentAt"],
    ["originalText missing", noOriginalText, "originalText"],
    ["threadId empty", { ...base, threadId: "" }, "threadId"],
    ["fromAgentId blank", { ...base, fromAgentId: "   " }, "fromAgentId"],
    ["maxAttempts 0", { ...base, maxAttempts: 0 }, "maxAttempts"],
    ["maxAttempts 2.5", { ...base, maxAttempts: 2.5 }, "maxAttempts"],
    ["responseTimeoutMs 0", { ...base, responseTimeoutMs: 0 }, "responseTimeoutMs"],
    [
      "urgentResponseTimeoutMs negative",
      { ...base, urgentResponseTimeoutMs: -60_000 },
      "urgentResponseTimeoutMs",
    ],
    ["sentAt negative", { ...base, sentAt: -1 }, "sentAt"],
    ["sentAt NaN", { ...base, sentAt: Number.NaN }, "sentAt"],
    ["urgent a string", { ...base, urgent: "yes" }, "urgent"],
    ["notifyOnFailure a number", { ...base, notifyOnFailure: 1 }, "notifyOnFailure"],
  ];

  it.each(cases)("%s", (_label, input, field) => {
    const actor = createActor(mentionMachine, { input: input as MentionInput });
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
    const message = snapshot.error instanceof Error ? snapshot.error.message : "";
    expect(message).toContain("mentionMachine");
    expect(message).toContain(field);
  });

  it("no input at all", () => {
    const snapshot = createActor(mentionMachine, {
      input: undefined as unknown as MentionInput,
    }).getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
  });
});
