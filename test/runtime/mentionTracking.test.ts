// createMentionTracking on its own: which collaborations a thread message reaches, mentions(), and the
// indexes a start rebuilds from the stored records. Over the runtime's actors on a real durable host and
// the memory store (kept across a host's stop and start), an in-memory Discord, in simulated time.
import { describe, expect, it, vi } from "vitest";
import { createMemoryStore } from "../../src/durable/index.js";
import type { ActorRecord } from "../../src/persistence/index.js";
import { createMentionTracking } from "../../src/runtime/mentionTracking.js";
import type { DiscordSendParams, DiscordSendResult } from "../../src/runtime/ports.js";
import type { InboundDiscordMessage } from "../../src/policies/index.js";
import { BOTS, CHANNEL, drain, FakeDiscord } from "../support/runtimeFakes.js";
import { discordSendOver, HoldingStore, runtimeParts, usePartsHarness } from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const keep = usePartsHarness(T0);

/** A runtime's actors with mention tracking and discordSend, started on `store` (as at a runtime's start). */
async function tracked(store: HoldingStore, discord: FakeDiscord) {
  const parts = runtimeParts({ store, discord });
  const tracking = createMentionTracking({
    actors: parts.actors,
    store: parts.store,
    threads: parts.threads,
    awaiting: parts.awaiting,
    requireStarted: () => undefined,
    cleanupMaxAgeMs: parts.config.discord.a2aRetry.cleanupMaxAgeMs,
    now: () => Date.now(),
  });
  parts.indexRecord = tracking.indexRecord;
  await parts.actors.start();
  keep(parts);
  const discordSend = discordSendOver(parts, discord);
  const send = async (p: Partial<DiscordSendParams>) => {
    const result = await discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
      ...p,
    });
    if (result.status !== "sent") throw new Error(`not sent: ${JSON.stringify(result)}`);
    return result;
  };
  return { parts, ...tracking, send };
}

let messages = 0;
/** A bot's message in a thread, as handleDiscordMessage passes it on. */
function botMessage(threadId: string, agentId: keyof typeof BOTS): InboundDiscordMessage {
  messages += 1;
  return {
    messageId: String(1_400_000_000_000_900_000n + BigInt(messages)),
    channelId: threadId,
    threadId,
    parentChannelId: CHANNEL,
    authorId: BOTS[agentId],
    authorIsBot: true,
    content: "봤어요",
    mentionUserIds: [],
    ts: Date.now(),
  };
}

const statusOf = async (mentions: () => Promise<Array<{ id: string; status: string }>>, id: string) =>
  (await mentions()).find((m) => m.id === id)?.status;

type Sent = Extract<DiscordSendResult, { status: "sent" }>;

describe("createMentionTracking: routeThreadMessage", () => {
  it("the target's answer ends its mentions in that thread; any other message changes and writes nothing", async () => {
    const store = new HoldingStore(createMemoryStore());
    const discord = new FakeDiscord();
    const { parts, routeThreadMessage, mentions, send } = await tracked(store, discord);
    const toEden = await send({});
    // The pair's thread is reused: two mentions of eden await in it.
    const toEdenAgain = await send({ message: "하나 더" });
    expect(toEdenAgain.threadId).toBe(toEden.threadId);
    const toSeum = await send({ targetAgentId: "seum" });
    await parts.actors.idle();
    const stored = await store.get(toEden.mentionId);
    const puts = store.puts;

    // The requester's own post echoed back, a bystander bot, a human, the target in another thread:
    // each reaches the mentions of its thread, which ignore it, so nothing is written.
    await routeThreadMessage(toEden.threadId, botMessage(toEden.threadId, "ruda"));
    await routeThreadMessage(toEden.threadId, botMessage(toEden.threadId, "seum"));
    await routeThreadMessage(toEden.threadId, {
      ...botMessage(toEden.threadId, "eden"),
      authorId: "1400000000000000999",
      authorIsBot: false,
    });
    await routeThreadMessage(toSeum.threadId, botMessage(toSeum.threadId, "eden"));
    await parts.actors.idle();
    expect(store.puts).toBe(puts);
    expect(await store.get(toEden.mentionId)).toEqual(stored);
    expect(await statusOf(mentions, toSeum.mentionId)).toBe("pending");

    // The target's answer ends every open mention of it in that thread.
    await routeThreadMessage(toEden.threadId, botMessage(toEden.threadId, "eden"));
    await parts.actors.idle();
    expect(await statusOf(mentions, toEden.mentionId)).toBe("responded");
    expect(await statusOf(mentions, toEdenAgain.mentionId)).toBe("responded");
    expect(await statusOf(mentions, toSeum.mentionId)).toBe("pending");
    expect(await store.get(toEden.mentionId)).toMatchObject({ status: "done" });
    // Answered: no longer awaited there.
    expect(parts.awaiting.in(toEden.threadId)).toEqual([]);
  });

  it("a dormant collaboration (after a restart) is ended by its target's answer; another bot's message writes nothing", async () => {
    const store = new HoldingStore(createMemoryStore());
    const discord = new FakeDiscord();
    const first = await tracked(store, discord);
    const sent = await first.send({});
    await first.parts.stop();

    const second = await tracked(store, discord);
    expect(second.parts.actors.counts()).toMatchObject({ live: 0, dormant: 1 });
    expect((await second.parts.actors.list()).map((actor) => actor.id)).toEqual([sent.mentionId]);
    const puts = store.puts;
    await second.routeThreadMessage(sent.threadId, botMessage(sent.threadId, "ruda"));
    await second.parts.actors.idle();
    expect(store.puts).toBe(puts);

    await second.routeThreadMessage(sent.threadId, botMessage(sent.threadId, "eden"));
    await second.parts.actors.idle();
    expect(await store.get(sent.mentionId)).toMatchObject({
      status: "done",
      meta: { mention: { status: "responded" } },
    });
    expect(second.parts.emitted.map((e) => e.type)).toContain("a2a.collaborate.responded");
  });
});

describe("createMentionTracking: mentions()", () => {
  it("lists a finished collaboration until cleanupMaxAgeMs after it ended", async () => {
    const store = new HoldingStore(createMemoryStore());
    const { parts, routeThreadMessage, mentions, send } = await tracked(store, new FakeDiscord());
    const sent = await send({});
    routeThreadMessage(sent.threadId, botMessage(sent.threadId, "eden"));
    await parts.actors.idle();
    const maxAge = parts.config.discord.a2aRetry.cleanupMaxAgeMs;
    // The clock alone moves: no timer is due.
    vi.setSystemTime(T0 + maxAge);
    expect(await mentions()).toEqual([expect.objectContaining({ id: sent.mentionId, status: "responded" })]);
    vi.setSystemTime(T0 + maxAge + 1);
    expect(await mentions()).toEqual([]);
    expect(await store.get(sent.mentionId)).toBeUndefined();
  });
});

describe("createMentionTracking: what a late message or a write in flight does not change", () => {
  // A target's message from before its mention was sent (delivered late, in a reused thread) does not
  // answer it; were the unchanged snapshot written again, its later save time would read, to
  // EarlierPosts, as the first try of a reminder post in flight.
  it("a target's message from before the mention changes nothing and writes nothing", async () => {
    const store = new HoldingStore(createMemoryStore());
    const { parts, routeThreadMessage, send } = await tracked(store, new FakeDiscord());
    const sent = await send({});
    await vi.advanceTimersByTimeAsync(60_000);
    await parts.actors.idle();
    const stored = await store.get(sent.mentionId);
    const puts = store.puts;
    // Discord's ids are in the order it made the messages: one made before the mention has a lower one.
    const late = { ...botMessage(sent.threadId, "eden"), messageId: "1399999999999999999", ts: T0 - 1 };
    routeThreadMessage(sent.threadId, late);
    await parts.actors.idle();
    expect(store.puts).toBe(puts);
    expect(await store.get(sent.mentionId)).toEqual(stored);
  });

  // A collaboration that has just finished leaves the hosted actors when its last record is queued,
  // and reaches the archive only when that write lands: in between (an fsync on the lowdb store)
  // mentions() lists it from that record.
  it("mentions() lists a collaboration whose final write is still in flight", async () => {
    const store = new HoldingStore(createMemoryStore());
    const { parts, routeThreadMessage, mentions, send } = await tracked(store, new FakeDiscord());
    const sent = await send({});
    await parts.actors.idle();
    store.hold();
    try {
      routeThreadMessage(sent.threadId, botMessage(sent.threadId, "eden"));
      // Not idle(): the held write is in flight until release(), and idle() would wait for it.
      await drain();
      expect((await mentions()).map((m) => m.id)).toEqual([sent.mentionId]);
    } finally {
      store.release();
    }
  });
});

describe("createMentionTracking: after a restart", () => {
  /** Before the restart: one collaboration answered (archived), one still waiting (dormant after it). */
  async function restarted() {
    const store = new HoldingStore(createMemoryStore());
    const discord = new FakeDiscord();
    const first = await tracked(store, discord);
    const answered = await first.send({});
    const waiting = await first.send({ targetAgentId: "seum" });
    first.routeThreadMessage(answered.threadId, botMessage(answered.threadId, "eden"));
    await first.parts.actors.idle();
    await first.parts.stop();
    const listedBefore = { ...store.listed };
    const second = await tracked(store, discord);
    store.listed.archive -= listedBefore.archive;
    return { answered, waiting, second, store };
  }

  it("mentions() lists the archived, the dormant and the hosted collaborations, each once", async () => {
    const { answered, waiting, second } = await restarted();
    const hosted = await second.send({ fromAgentId: "eden", targetAgentId: "seum" });
    const summary = (s: Sent, targetAgentId: string, status: string) => ({
      id: s.mentionId,
      threadId: s.threadId,
      targetAgentId,
      status,
      attempts: 1,
    });
    const listed = await second.mentions();
    expect(listed).toHaveLength(3);
    expect(listed).toEqual(
      expect.arrayContaining([
        summary(answered, "eden", "responded"),
        summary(waiting, "seum", "pending"),
        summary(hosted, "seum", "pending"),
      ]),
    );
  });

  it("indexRecord rebuilds participants, the pair's route and the awaited answers from the live records, never reading the archive", async () => {
    const { answered, waiting, second, store } = await restarted();
    const { threads, awaiting } = second.parts;
    expect(threads.participantsOf(waiting.threadId).sort()).toEqual(["ruda", "seum"]);
    expect(threads.reusableRoute("ruda", "seum", undefined, Date.now())).toMatchObject({
      threadId: waiting.threadId,
      channelId: CHANNEL,
    });
    expect(threads.parentOf(waiting.threadId)).toBe(CHANNEL);
    // A finished collaboration's participants and route are in the thread state the runtime saves
    // (not kept by these parts): a start does not read the archive for them.
    expect(store.listed.archive).toBe(0);
    expect(threads.participantsOf(answered.threadId)).toEqual([]);
    // Only a live collaboration awaits an answer.
    expect(awaiting.in(waiting.threadId)).toEqual([waiting.mentionId]);
    expect(awaiting.has(answered.threadId)).toBe(false);
  });

  it("indexRecord leaves out a record with no thread: a flow, or a collaboration refused before it had one", () => {
    const parts = runtimeParts({ store: createMemoryStore() });
    const { indexRecord } = createMentionTracking({
      actors: parts.actors,
      store: parts.store,
      threads: parts.threads,
      awaiting: parts.awaiting,
      requireStarted: () => undefined,
      cleanupMaxAgeMs: 86_400_000,
      now: () => Date.now(),
    });
    const record = (machineId: string, meta: Record<string, unknown>): ActorRecord => ({
      id: `${machineId}-1`,
      machineId,
      machineVersion: 1,
      snapshot: {},
      status: "active",
      updatedAt: Date.now(),
      meta,
    });
    indexRecord(record("collaborate", { fromAgentId: "ruda", targetAgentId: "eden" }));
    indexRecord(
      record("a2aFlow", { fromAgentId: "ruda", targetAgentId: "eden", threadId: "1400000000000000600" }),
    );
    expect(parts.threads.entries()).toEqual([]);
    expect(parts.awaiting.has("1400000000000000600")).toBe(false);
  });
});
