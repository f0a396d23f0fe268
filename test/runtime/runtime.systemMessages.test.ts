import { describe, expect, it } from "vitest";
import type { InboundDiscordMessage } from "../../src/index.js";
import {
  BOTS,
  CHANNEL,
  FakeDiscord,
  HUMAN,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
} from "../support/runtimeFakes.js";
import { savedThreadEntries } from "../support/threadStateFiles.js";

// Messages Discord posts itself ("X started a thread", "X added Y to the thread", a pin…) are no one's
// words: handleDiscordMessage drops them first, whoever the author and whatever they mention.

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

let nextId = 800;
function inbound(over: Partial<InboundDiscordMessage>): InboundDiscordMessage {
  nextId += 1;
  return {
    messageId: `1400000000000000${nextId}`,
    channelId: CHANNEL,
    authorId: HUMAN,
    authorIsBot: false,
    content: `<@${BOTS.eden}> 안녕`,
    mentionUserIds: [BOTS.eden],
    ts: Date.now(),
    ...over,
  };
}

async function started(maxMessagesPerThread = 6) {
  const stateDir = tempStateDir();
  const config = {
    ...runtimeConfig,
    discord: {
      ...runtimeConfig.discord,
      collaboration: { ...runtimeConfig.discord.collaboration, loopGuard: { maxMessagesPerThread } },
    },
  };
  const r = runtime({ stateDir, config, discord: new FakeDiscord() });
  await r.start();
  return { r, stateDir };
}

describe("handleDiscordMessage: Discord's system messages", () => {
  it.each([1, 2, 6, 7, 18, 21, 46])(
    "type %i (a system message) mentioning an agent is dropped as system_message",
    async (type) => {
      const { r } = await started();
      expect(await r.handleDiscordMessage(inbound({ type }))).toEqual({
        action: "drop",
        reason: "system_message",
      });
    },
  );

  it.each([undefined, 0, 19, 20, 23])(
    "type %s is a message people and bots post: handled as before",
    async (type) => {
      const { r } = await started();
      expect(await r.handleDiscordMessage(inbound(type === undefined ? {} : { type }))).toMatchObject({
        action: "handle",
        agentId: "eden",
      });
    },
  );

  it("from the target's bot in its thread: the mention stays pending, no observer record, no loop-guard count", async () => {
    const { r, stateDir } = await started(3);
    const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    if (sent.status !== "sent") throw new Error("not sent");
    const inThread = { channelId: sent.threadId, threadId: sent.threadId, parentChannelId: CHANNEL };
    const fromEden = { ...inThread, authorId: BOTS.eden, authorIsBot: true };
    // Four system messages by eden's bot: the thread announced, members added (naming ruda) and removed.
    const system = [
      inbound({ ...fromEden, type: 18, content: "리뷰 부탁", mentionUserIds: [] }),
      inbound({ ...fromEden, type: 1, content: "", mentionUserIds: [BOTS.ruda] }),
      inbound({ ...fromEden, type: 2, content: "", mentionUserIds: [BOTS.ruda] }),
      inbound({ ...fromEden, type: 1, content: "", mentionUserIds: [BOTS.seum] }),
    ];
    for (const m of system) {
      expect(await r.handleDiscordMessage(m)).toEqual({ action: "drop", reason: "system_message" });
    }
    expect((await r.mentions()).find((m) => m.id === sent.mentionId)?.status).toBe("pending");

    // eden's real answer ends the mention; ruda's reply is handed on: neither is past the loop guard (3).
    const answer = inbound({ ...fromEden, content: "봤어요, 두 군데 고치면 됩니다", mentionUserIds: [] });
    expect(await r.handleDiscordMessage(answer)).toEqual({ action: "observe" });
    expect((await r.mentions()).find((m) => m.id === sent.mentionId)?.status).toBe("responded");
    const reply = inbound({
      ...inThread,
      authorId: BOTS.ruda,
      authorIsBot: true,
      content: `<@${BOTS.eden}> 어디를 고치면 되나요? 자세히 알려주세요`,
      mentionUserIds: [BOTS.eden],
    });
    expect(await r.handleDiscordMessage(reply)).toMatchObject({ action: "handle", agentId: "eden" });

    await r.stop();
    const observed = [...savedThreadEntries(stateDir).keys()].filter((k) => k.startsWith("observed "));
    expect(observed).toContain(`observed ${sent.threadId} ${answer.messageId}`);
    for (const m of system) expect(observed).not.toContain(`observed ${sent.threadId} ${m.messageId}`);
  });
});
