import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { type MentionContext } from "../../src/machines/index.js";
import { type MentionInput, mentionMachine } from "../../src/index.js";
import { fakePost, httpError, IDS, MINUTE, postingAt, T0 } from "../support/discordFakes.js";
import { simulatedTime } from "../support/simulatedTime.js";

// A mention stored by the release before its waits were `after` delays keeps a due time in its context
// (`due`), which the runtime still delivers as RESPONSE_TIMEOUT or RETRY_DUE. Restored, such a snapshot
// has no XState delay scheduled: it moves on that event at its due time, once, and its next wait is an
// `after` delay like any new mention's.

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

type StoredMention = { value: string; context: MentionContext };

/** The mention children of the collaborations in test/fixtures/state-dir-v1, as that release wrote them. */
function fixtureMentions(): StoredMention[] {
  const dir = fileURLToPath(new URL("../fixtures/state-dir-v1/actors/", import.meta.url));
  const found: StoredMention[] = [];
  for (const file of readdirSync(dir)) {
    const shard = JSON.parse(readFileSync(dir + file, "utf8")) as {
      records: Record<string, { machineId: string; snapshot: unknown }>;
    };
    for (const record of Object.values(shard.records)) {
      if (record.machineId !== "collaborate") continue;
      const snapshot = record.snapshot as { children: { mention: { snapshot: StoredMention } } };
      found.push(snapshot.children.mention.snapshot);
    }
  }
  return found;
}

function storedIn(value: string): StoredMention {
  const stored = fixtureMentions().find((m) => m.value === value);
  if (stored === undefined) throw new Error(`no mention ${value} in the fixture`);
  return stored;
}

/** Restores `stored` on a simulated clock at `now`, with posts that land at the clock's time. */
function restore(stored: unknown, now: number) {
  const clock = simulatedTime(now);
  const reminders = postingAt(clock, "reminder");
  const escalations = postingAt(clock, "escalation");
  const actor = createActor(
    mentionMachine.provide({ actors: { postReminder: reminders.logic, postEscalation: escalations.logic } }),
    // XState restores from the snapshot and ignores the input.
    { input: {} as MentionInput, snapshot: stored as never, clock: clock.timers },
  ).start();
  const deliver = async (type: "RESPONSE_TIMEOUT" | "RETRY_DUE", at: number) => {
    clock.now = Math.max(clock.now, at);
    actor.send({ type, at });
    await settle();
  };
  return { actor, clock, reminders, escalations, deliver };
}

const reminderLine = (n: number, targetBotId: string) =>
  `[리마인더 ${n}/3] <@${targetBotId}> 위 요청에 대해 확인 부탁해요.`;

describe("a mention stored reminded once, waiting for RESPONSE_TIMEOUT at its due time", () => {
  it("reminds once at that time, with the same text as before, then waits with its after delay", async () => {
    const stored = storedIn("reminded");
    const due = stored.context.due?.at ?? Number.NaN;
    expect(stored.context.due).toEqual({
      event: "RESPONSE_TIMEOUT",
      at: stored.context.lastDeliveredAt + 5 * MINUTE,
    });
    const m = restore(stored, stored.context.lastDeliveredAt + MINUTE);
    // No delay was scheduled for it: time alone does not end the stored wait, nor an early event.
    expect(m.clock.nextDue()).toBeNaN();
    m.clock.now = due + MINUTE;
    await m.deliver("RESPONSE_TIMEOUT", due - 1);
    expect(m.actor.getSnapshot().value).toBe("reminded");
    expect(m.reminders.inputs).toEqual([]);

    await m.deliver("RESPONSE_TIMEOUT", due);
    await m.deliver("RESPONSE_TIMEOUT", due);
    expect(m.reminders.inputs).toHaveLength(1);
    const { targetBotId, sentAt, mentionId } = stored.context;
    expect(m.reminders.inputs[0]).toMatchObject({
      content: `${reminderLine(2, targetBotId)}\n원본: "배포 확인 부탁" (${(due - sentAt) / MINUTE}분 전)`,
      nonceKey: `${mentionId}:reminder:2`,
    });
    expect(m.actor.getSnapshot().context).toMatchObject({ attempts: 3, firedAt: due, due: undefined });
    // The next timeout is the machine's own delay, a full timeout after the reminder landed.
    expect(m.clock.nextDue()).toBe(m.clock.now + 5 * MINUTE);
    m.clock.now = m.clock.nextDue();
    await settle();
    expect(m.actor.getSnapshot().value).toBe("escalated");
    expect(m.escalations.inputs).toHaveLength(1);
    m.actor.stop();
  });
});

describe("a mention stored pending, its RESPONSE_TIMEOUT delivered late (a restart after the due time)", () => {
  it("reminds once, counting the minutes to the due time", async () => {
    const stored = storedIn("pending");
    const due = stored.context.due?.at ?? Number.NaN;
    const m = restore(stored, due + 20 * MINUTE);
    await m.deliver("RESPONSE_TIMEOUT", due + 20 * MINUTE);
    expect(m.reminders.inputs.map((p) => p.content.split("\n")[0])).toEqual([
      reminderLine(1, stored.context.targetBotId),
    ]);
    expect(m.reminders.inputs[0]?.content).toContain("(5분 전)");
    expect(m.actor.getSnapshot().context).toMatchObject({ attempts: 2, firedAt: due });
    expect(m.clock.nextDue()).toBe(due + 25 * MINUTE);
    m.actor.stop();
  });
});

describe("a mention stored while a failed post waits for RETRY_DUE", () => {
  const input: MentionInput = {
    mentionId: "collab-1",
    threadId: IDS.mentionThread,
    fromAgentId: "ruda",
    targetAgentId: "eden",
    targetBotId: IDS.targetBot,
    originalText: "코드 리뷰 해줘",
    responseTimeoutMs: 5 * MINUTE,
    urgentResponseTimeoutMs: MINUTE,
    maxAttempts: 2,
    escalationMentionId: IDS.human,
    sentAt: T0,
  };

  /**
   * A mention whose reminder (or, with one attempt, escalation) failed with a 503 at its first timeout,
   * persisted in its retrying state with the due time the release before would have stored.
   */
  function storedRetrying(maxAttempts: number) {
    const clock = simulatedTime(T0);
    const failing = fakePost(() => ({ fail: httpError(503, clock.now) }));
    const actor = createActor(
      mentionMachine.provide({ actors: { postReminder: failing.logic, postEscalation: failing.logic } }),
      { input: { ...input, maxAttempts }, clock: clock.timers },
    ).start();
    clock.now = T0 + 5 * MINUTE;
    return settle().then(() => {
      const persisted = actor.getPersistedSnapshot() as unknown as StoredMention;
      actor.stop();
      const due = { event: "RETRY_DUE" as const, at: T0 + 5 * MINUTE + 1_000 };
      return {
        stored: { ...persisted, context: { ...persisted.context, due } },
        due: due.at,
        first: failing.inputs[0],
      };
    });
  }

  it.each([
    ["reminderRetrying", 2, "reminders"],
    ["escalationRetrying", 1, "escalations"],
  ] as const)(
    "in %s: posts again once at the due time, with the same content and nonce key",
    async (state, maxAttempts, posts) => {
      const { stored, due, first } = await storedRetrying(maxAttempts);
      expect(stored.value).toBe(state);
      const m = restore(stored, due - 500);
      m.clock.now = due + MINUTE;
      await m.deliver("RETRY_DUE", due - 1);
      expect(m.actor.getSnapshot().value).toBe(state);
      // Delivered twice (the second while the post is under way): one post.
      m.actor.send({ type: "RETRY_DUE", at: due });
      m.actor.send({ type: "RETRY_DUE", at: due });
      await settle();
      expect(m[posts].inputs).toEqual([first]);
      expect(m.actor.getSnapshot().value).toBe(state === "reminderRetrying" ? "reminded" : "escalated");
      expect(m.actor.getSnapshot().context.due).toBeUndefined();
      m.actor.stop();
    },
  );
});
