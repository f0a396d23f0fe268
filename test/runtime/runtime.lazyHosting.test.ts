import { describe, expect, it, vi } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { type A2AConfigInput, createA2ARuntime, type MentionSummary } from "../../src/index.js";
import {
  BOTS,
  FakeDiscord,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
} from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

// Lazy hosting: after a restart, a collaboration whose mention only waits (for a timeout or an answer)
// stays a record until its first event; the restart guarantees are those of a hosted one.
const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;
const runtime = useRuntimeHarness(T0);

/** The collaborate actors the runtime created (hosted), by id, seen through its `inspect` option. */
function collaborateActors() {
  const ids: string[] = [];
  const inspect = (event: InspectionEvent) => {
    if (event.type !== "@xstate.actor") return;
    const ref = event.actorRef as AnyActorRef & { logic?: { id?: unknown } };
    if (ref.sessionId === event.rootId && ref.logic?.id === "collaborate") ids.push(ref.id);
  };
  return { ids, inspect };
}

/** Sends one collaboration per topic from ruda to eden, each in its own thread, then stops. */
async function populate(
  dir: string,
  discord: FakeDiscord,
  topics: string[],
  afterMs = 0,
  config: A2AConfigInput = runtimeConfig,
) {
  const first = createA2ARuntime({ config, stateDir: dir, discord, logger: textLogger(() => {}) });
  await first.start();
  const sent: Array<{ threadId: string; mentionId: string }> = [];
  for (const topicId of topics) {
    const result = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: `리뷰 부탁 (${topicId})`,
      topicId,
    });
    if (result.status !== "sent") throw new Error(`not sent: ${JSON.stringify(result.error)}`);
    sent.push(result);
  }
  if (afterMs > 0) await vi.advanceTimersByTimeAsync(afterMs);
  const before = await first.mentions();
  await first.stop();
  return { sent, before };
}

let messages = 0;
function message(threadId: string, authorId: string, content: string) {
  messages += 1;
  return {
    messageId: String(1_400_000_000_000_000_700n + BigInt(messages)),
    channelId: threadId,
    threadId,
    authorId,
    authorIsBot: true,
    content,
    mentionUserIds: [],
    ts: Date.now(),
  };
}

const byId = (list: MentionSummary[]) => [...list].sort((a, b) => a.id.localeCompare(b.id));

describe("createA2ARuntime: lazy hosting of waiting collaborations", () => {
  it("hosts none of N waiting collaborations at start; an answer in one thread hosts that one and ends it responded", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const { sent } = await populate(dir, discord, ["t1", "t2", "t3", "t4"]);
    const seen = collaborateActors();
    const again = runtime({ stateDir: dir, discord, inspect: seen.inspect });
    await again.start();
    await again.idle();
    expect(seen.ids).toEqual([]);
    expect((await again.mentions()).map((m) => m.status)).toEqual([
      "pending",
      "pending",
      "pending",
      "pending",
    ]);

    const target = sent[1];
    if (target === undefined) throw new Error("no second collaboration");
    const events: string[] = [];
    again.onEvent((e) => events.push(e.type));
    await again.handleDiscordMessage(message(target.threadId, BOTS.eden, "봤어요, 고쳤습니다"));
    expect(seen.ids).toEqual([target.mentionId]);
    expect(events).toContain("a2a.collaborate.responded");
    const after = await again.mentions();
    expect(after.find((m) => m.id === target.mentionId)?.status).toBe("responded");
    expect(after.filter((m) => m.status === "pending")).toHaveLength(3);
    await again.idle();
    expect(seen.ids).toEqual([target.mentionId]);

    // The answer is durable: a third runtime reads it responded, and hosts nothing at start either.
    await again.stop();
    const third = collaborateActors();
    const later = runtime({ stateDir: dir, discord, inspect: third.inspect });
    await later.start();
    expect((await later.mentions()).find((m) => m.id === target.mentionId)?.status).toBe("responded");
    expect(third.ids).toEqual([]);
  });

  it("with reminders off, an untimed mention stays dormant too, and its answer ends it responded", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const config = {
      ...runtimeConfig,
      discord: { ...runtimeConfig.discord, a2aRetry: { ...runtimeConfig.discord.a2aRetry, enabled: false } },
    };
    const { sent, before } = await populate(dir, discord, ["t1"], 0, config);
    const seen = collaborateActors();
    const again = runtime({ config, stateDir: dir, discord, inspect: seen.inspect });
    await again.start();
    await vi.advanceTimersByTimeAsync(60 * MINUTE);
    await again.idle();
    expect(seen.ids).toEqual([]);
    expect(await again.mentions()).toEqual(before);
    const target = sent[0];
    if (target === undefined) throw new Error("not sent");
    await again.handleDiscordMessage(message(target.threadId, BOTS.eden, "네"));
    expect(seen.ids).toEqual([target.mentionId]);
    expect(await again.mentions()).toEqual([{ ...before[0], status: "responded" }]);
  });

  it("a dormant collaboration still gets its reminder on time (T+5 after a restart at T+4), once, then hosted", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const { sent } = await populate(dir, discord, ["t1", "t2"], 3 * MINUTE);
    vi.setSystemTime(T0 + 4 * MINUTE);
    const seen = collaborateActors();
    const again = runtime({ stateDir: dir, discord, inspect: seen.inspect });
    await again.start();
    await again.idle();
    expect(seen.ids).toEqual([]);
    const reminders = () => discord.messages.filter((m) => m.content.startsWith("[리마인더"));
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    await again.idle();
    expect(reminders()).toHaveLength(0);
    expect(seen.ids).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await again.idle();
    expect(reminders()).toHaveLength(2);
    expect(
      reminders()
        .map((m) => m.channelId)
        .sort(),
    ).toEqual(sent.map((s) => s.threadId).sort());
    expect(reminders()[0]?.content.split("\n")[0]).toBe(
      `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`,
    );
    expect([...seen.ids].sort()).toEqual(sent.map((s) => s.mentionId).sort());
    expect((await again.mentions()).map((m) => [m.status, m.attempts])).toEqual([
      ["reminded", 2],
      ["reminded", 2],
    ]);
  });

  it("an overdue timeout of a dormant collaboration fires once at start, and never again after another restart", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const { sent } = await populate(dir, discord, ["t1"], 3 * MINUTE);
    vi.setSystemTime(T0 + 7 * MINUTE);
    const again = runtime({ stateDir: dir, discord });
    await again.start();
    const reminders = () => discord.messages.filter((m) => m.content.startsWith("[리마인더"));
    await vi.advanceTimersByTimeAsync(0);
    await again.idle();
    expect(reminders()).toHaveLength(1);
    await again.stop();
    const third = runtime({ stateDir: dir, discord });
    await third.start();
    await vi.advanceTimersByTimeAsync(0);
    await third.idle();
    expect(reminders()).toHaveLength(1);
    expect(reminders()[0]?.channelId).toBe(sent[0]?.threadId);
    // The next timeout falls due a full timeout after the reminder was sent (T+7): T+12.
    await vi.advanceTimersByTimeAsync(5 * MINUTE - 1);
    await third.idle();
    expect(reminders()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await third.idle();
    expect(reminders()).toHaveLength(2);
  });

  it("mentions() reads the same for a collaboration dormant and hosted (pending, reminded, finished)", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    // t1 is sent at T0 and reminded at T+5; t2 is sent at T+3, still pending at T+6; t3 is answered.
    const first = createA2ARuntime({
      config: runtimeConfig,
      stateDir: dir,
      discord,
      logger: textLogger(() => {}),
    });
    await first.start();
    // t2 comes from seum: ruda, having just been answered by eden in t3, must answer in that thread.
    const send = async (topicId: string, fromAgentId = "ruda") => {
      const result = await first.discordSend({
        fromAgentId,
        targetAgentId: "eden",
        message: "리뷰",
        topicId,
      });
      if (result.status !== "sent") throw new Error("not sent");
      return result;
    };
    const t1 = await send("t1");
    const t3 = await send("t3");
    await first.handleDiscordMessage(message(t3.threadId, BOTS.eden, "끝났어요"));
    await vi.advanceTimersByTimeAsync(3 * MINUTE);
    const t2 = await send("t2", "seum");
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    await first.idle();
    expect(discord.messages.filter((m) => m.content.startsWith("[리마인더"))).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(MINUTE);
    await first.idle();
    const hostedBefore = await first.mentions();
    await first.stop();
    const statusOf = (list: MentionSummary[], id: string) => list.find((m) => m.id === id)?.status;
    expect([t1, t2, t3].map((t) => statusOf(hostedBefore, t.mentionId))).toEqual([
      "reminded",
      "pending",
      "responded",
    ]);

    const seen = collaborateActors();
    const again = runtime({ stateDir: dir, discord, inspect: seen.inspect });
    await again.start();
    const dormant = await again.mentions();
    expect(seen.ids).toEqual([]);
    expect(byId(dormant)).toEqual(byId(hostedBefore));

    // A message from a bot other than the target's in each thread hosts both (their mentions ignore it).
    await again.handleDiscordMessage(message(t1.threadId, BOTS.seum, "저도 볼게요"));
    await again.handleDiscordMessage(message(t2.threadId, BOTS.ruda, "저도 볼게요"));
    expect([...seen.ids].sort()).toEqual([t1.mentionId, t2.mentionId].sort());
    const hosted = await again.mentions();
    expect(byId(hosted)).toEqual(byId(dormant));
    expect(byId(hosted).find((m) => m.id === t1.mentionId)).toEqual({
      id: t1.mentionId,
      threadId: t1.threadId,
      targetAgentId: "eden",
      status: "reminded",
      attempts: 2,
    });
  });
});
