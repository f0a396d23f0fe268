// createCollaborationService (discordSend) on its own: over the runtime's actors on a real durable host
// and the memory store, an in-memory Discord, in simulated time.
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/durable/index.js";
import { MissingPortError } from "../../src/runtime/MissingPortError.js";
import type { DiscordSendParams } from "../../src/runtime/ports.js";
import { BOTS, CHANNEL, FakeDiscord, runtimeConfig } from "../support/runtimeFakes.js";
import {
  discordSendOver,
  type RuntimeParts,
  runtimeParts,
  usePartsHarness,
} from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const SINK = "1400000000000000777";
const keep = usePartsHarness(T0);

async function collaborationService(o: { discord?: FakeDiscord; config?: unknown } = {}) {
  const store = createMemoryStore();
  const parts = runtimeParts({ store, ...(o.discord && { discord: o.discord }), config: o.config });
  await parts.actors.start();
  keep(parts);
  const discordSend = discordSendOver(parts, o.discord, (threadId) => threadId === SINK);
  return { parts, store, discordSend, events: parts.emitted as Array<{ type: string; data?: unknown }> };
}

const ask = (p: Partial<DiscordSendParams> = {}): DiscordSendParams => ({
  fromAgentId: "ruda",
  targetAgentId: "eden",
  message: "코드 리뷰 해줘",
  ...p,
});

const hosted = (parts: RuntimeParts) => parts.actors.list();

describe("createCollaborationService: refusals", () => {
  it("an unknown sender is rejected unknown_agent, reported as a2a.collaborate.failed, with no actor", async () => {
    const discord = new FakeDiscord();
    const { parts, discordSend, events } = await collaborationService({ discord });
    const result = await discordSend(ask({ fromAgentId: "nobody" }));
    expect(result).toEqual({
      status: "rejected",
      error: { code: "unknown_agent", message: expect.stringContaining('"nobody"') },
    });
    expect(events).toEqual([
      expect.objectContaining({
        type: "a2a.collaborate.failed",
        data: expect.objectContaining({
          fromAgentId: "nobody",
          toAgentId: "eden",
          errorCode: "unknown_agent",
        }),
      }),
    ]);
    expect(await hosted(parts)).toEqual([]);
    expect(discord.messages).toEqual([]);
  });

  it("an unknown target is refused by its collaboration: rejected unknown_agent, nothing posted", async () => {
    const discord = new FakeDiscord();
    const { discordSend, store } = await collaborationService({ discord });
    const result = await discordSend(ask({ targetAgentId: "nobody" }));
    expect(result).toMatchObject({ status: "rejected", error: { code: "unknown_agent" } });
    expect(discord.messages).toEqual([]);
    expect((await store.list("archive")).map((r) => [r.machineId, r.status])).toEqual([
      ["collaborate", "done"],
    ]);
  });

  it("a sink thread is refused sink_thread before anything is asked of Discord", async () => {
    const discord = new FakeDiscord();
    const { parts, discordSend } = await collaborationService({ discord });
    const result = await discordSend(ask({ threadId: SINK }));
    expect(result).toMatchObject({ status: "rejected", error: { code: "sink_thread" } });
    expect(result.status === "rejected" && result.error.message).toContain(SINK);
    expect(discord.describeCalls).toEqual([]);
    expect(await hosted(parts)).toEqual([]);
  });

  it("bad input is rejected invalid_input naming the field", async () => {
    const { discordSend } = await collaborationService({ discord: new FakeDiscord() });
    const result = await discordSend(ask({ threadId: "not-a-thread" }));
    expect(result).toMatchObject({ status: "rejected", error: { code: "invalid_input" } });
    expect(result.status === "rejected" && result.error.message).toMatch(/^threadId: must be a Discord id/);
  });

  it("without a Discord port throws MissingPortError naming the option, and starts no actor", async () => {
    const { parts, discordSend } = await collaborationService();
    const call = discordSend(ask());
    await expect(call).rejects.toBeInstanceOf(MissingPortError);
    await expect(call).rejects.toMatchObject({ method: "discordSend", option: "discord" });
    expect(await hosted(parts)).toEqual([]);
  });

  it("the loop guard refuses a pair past its limit (loop_guard), after warning on the last allowed one", async () => {
    const discord = new FakeDiscord();
    const config = {
      ...runtimeConfig,
      discord: {
        ...runtimeConfig.discord,
        collaboration: { ...runtimeConfig.discord.collaboration, loopGuard: { maxCollaboratePerPair: 1 } },
      },
    };
    const { parts, discordSend } = await collaborationService({ discord, config });
    expect(await discordSend(ask())).toMatchObject({ status: "sent" });
    expect(parts.warnings).toEqual([expect.stringContaining("loop guard: ruda ↔ eden")]);
    const posted = discord.messages.length;
    // Either direction counts for the pair.
    const refused = await discordSend(ask({ fromAgentId: "eden", targetAgentId: "ruda" }));
    expect(refused).toMatchObject({ status: "rejected", error: { code: "loop_guard" } });
    expect(discord.messages).toHaveLength(posted);
  });
});

describe("createCollaborationService: sent", () => {
  it("answers with the new thread, the mention's message and the collaboration's id", async () => {
    const discord = new FakeDiscord();
    const { parts, store, discordSend } = await collaborationService({ discord });
    const result = await discordSend(ask());
    if (result.status !== "sent") throw new Error(`not sent: ${JSON.stringify(result)}`);
    expect(discord.threads).toEqual([
      expect.objectContaining({ threadId: result.threadId, channelId: CHANNEL }),
    ]);
    const mention = discord.in(result.threadId).at(-1);
    expect(mention).toMatchObject({
      messageId: result.messageId,
      asAgentId: "ruda",
      mentionUserIds: [BOTS.eden],
    });
    expect(mention?.content).toContain("코드 리뷰 해줘");
    expect((await hosted(parts)).map((e) => [e.id, e.kind])).toEqual([[result.mentionId, "collaborate"]]);
    // What the caller is told is on record.
    expect(await store.get(result.mentionId)).toMatchObject({
      status: "active",
      meta: { threadId: result.threadId, fromAgentId: "ruda", targetAgentId: "eden" },
    });
  });

  it("the same pair and topic reuse their thread; another topic opens its own", async () => {
    const discord = new FakeDiscord();
    const { discordSend } = await collaborationService({ discord });
    const first = await discordSend(ask({ topicId: "auth" }));
    const again = await discordSend(ask({ topicId: "auth", message: "하나 더" }));
    const other = await discordSend(ask({ topicId: "billing" }));
    if (first.status !== "sent" || again.status !== "sent" || other.status !== "sent")
      throw new Error(`not all sent: ${JSON.stringify([first, again, other])}`);
    expect(again.threadId).toBe(first.threadId);
    expect(again.messageId).not.toBe(first.messageId);
    expect(again.mentionId).not.toBe(first.mentionId);
    expect(other.threadId).not.toBe(first.threadId);
    expect(discord.threads.map((t) => t.threadId)).toEqual([first.threadId, other.threadId]);
  });

  it("the same idempotencyKey, during or after the first call, answers its result and starts one collaboration", async () => {
    const discord = new FakeDiscord();
    const { parts, discordSend } = await collaborationService({ discord });
    // One while the first is under way, one after it was answered.
    const [first, during] = await Promise.all([
      discordSend(ask({ idempotencyKey: "k1" })),
      discordSend(ask({ idempotencyKey: "k1" })),
    ]);
    const after = await discordSend(ask({ idempotencyKey: "k1" }));
    expect(first).toMatchObject({ status: "sent" });
    expect(during).toEqual(first);
    expect(after).toEqual(first);
    expect(await hosted(parts)).toHaveLength(1);
    expect(discord.threads).toHaveLength(1);
  });
});

describe("createCollaborationService: an explicit thread", () => {
  const OTHER_CHANNEL = "1400000000000000501";
  const THREAD = "1400000000000000601";

  it("in an allowed channel (its parent asked of Discord once): the mention is posted there, no thread opened", async () => {
    const discord = new FakeDiscord();
    discord.channels.set(THREAD, { channelId: THREAD, parentChannelId: CHANNEL, isThread: true });
    const { parts, discordSend } = await collaborationService({ discord });
    const result = await discordSend(ask({ threadId: THREAD }));
    expect(result).toMatchObject({ status: "sent", threadId: THREAD });
    expect(discord.threads).toEqual([]);
    expect(discord.in(THREAD)).toEqual([expect.objectContaining({ mentionUserIds: [BOTS.eden] })]);
    expect(parts.threads.parentOf(THREAD)).toBe(CHANNEL);
    await discordSend(ask({ threadId: THREAD, message: "하나 더" }));
    expect(discord.describeCalls).toEqual([THREAD]);
  });

  it("in a channel outside the allowlist is rejected channel_not_allowed, nothing posted", async () => {
    const discord = new FakeDiscord();
    discord.channels.set(THREAD, { channelId: THREAD, parentChannelId: OTHER_CHANNEL, isThread: true });
    const { discordSend } = await collaborationService({ discord });
    expect(await discordSend(ask({ threadId: THREAD }))).toMatchObject({
      status: "rejected",
      error: { code: "channel_not_allowed" },
    });
    expect(discord.messages).toEqual([]);
  });

  it("that Discord does not know (404) fails the collaboration discord_not_found, reported for a human", async () => {
    const discord = new FakeDiscord();
    const { parts, discordSend, events } = await collaborationService({ discord });
    expect(await discordSend(ask({ threadId: THREAD }))).toMatchObject({
      status: "rejected",
      error: { code: "discord_not_found" },
    });
    // The answer comes as soon as the failure is known; the report follows the notice to a human.
    await parts.actors.idle();
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "a2a.collaborate.failed",
        data: expect.objectContaining({ errorCode: "discord_not_found", escalate: true }),
      }),
    );
  });

  it("whose lookup fails for now (503) is rejected discord_unavailable before any actor, and asked again next time", async () => {
    const discord = new FakeDiscord();
    const { parts, discordSend } = await collaborationService({ discord });
    const describe = discord.describeChannel.bind(discord);
    discord.describeChannel = async (p) => {
      if (discord.describeCalls.length === 0) {
        discord.describeCalls.push(p.channelId);
        throw Object.assign(new Error("Service Unavailable"), { status: 503 });
      }
      return describe(p);
    };
    discord.channels.set(THREAD, { channelId: THREAD, parentChannelId: CHANNEL, isThread: true });
    const refused = await discordSend(ask({ threadId: THREAD }));
    expect(refused).toMatchObject({ status: "rejected", error: { code: "discord_unavailable" } });
    expect(refused.status === "rejected" && refused.error.message).toContain(THREAD);
    expect(await hosted(parts)).toEqual([]);
    expect(await discordSend(ask({ threadId: THREAD }))).toMatchObject({ status: "sent", threadId: THREAD });
  });
});
