import { afterEach, describe, expect, it } from "vitest";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import { discordSendTool, handleDiscordSend } from "../../src/discord/index.js";
import { BOTS, CHANNEL, FakeDiscord, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const running: A2ARuntime[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function started(discord = new FakeDiscord()) {
  const runtime = createA2ARuntime({
    config: runtimeConfig,
    stateDir: tempStateDir(),
    discord,
    logger: textLogger(() => {}),
  });
  running.push(runtime);
  await runtime.start();
  return { runtime, discord };
}

describe("discord_send tool", () => {
  it("is described by a JSON schema of its parameters, targetAgentId and message required", () => {
    expect(discordSendTool.name).toBe("discord_send");
    const schema = discordSendTool.inputSchema as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties).sort()).toEqual(
      ["channelId", "message", "targetAgentId", "threadId", "threadName", "topicId", "urgent"].sort(),
    );
    expect(schema.required.sort()).toEqual(["message", "targetAgentId"]);
  });

  it("returns at once with the thread once the mention is posted, without waiting for a reply", async () => {
    const { runtime, discord } = await started();
    const result = await handleDiscordSend(runtime, "ruda", {
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.text).toBe(`메시지 전송 완료. 스레드 ID: ${result.threadId}`);
    // The mention is in the thread; the channel holds only the thread's starter, which pings nobody.
    expect(discord.in(result.threadId)).toEqual([
      expect.objectContaining({ messageId: result.messageId, content: `<@${BOTS.eden}> 코드 리뷰 해줘` }),
    ]);
    expect(discord.in(CHANNEL)).toEqual([expect.objectContaining({ mentionUserIds: [] })]);
    expect((await runtime.mentions())[0]).toMatchObject({ status: "pending" });
  });

  it.each([
    ["a missing target", { message: "hi" }, "invalid_arguments", /targetAgentId/],
    ["a non-string message", { targetAgentId: "eden", message: 5 }, "invalid_arguments", /message/],
    ["an unknown field", { targetAgentId: "eden", message: "hi", bogus: 1 }, "invalid_arguments", /bogus/],
    ["an unknown agent", { targetAgentId: "nobody", message: "hi" }, "unknown_agent", /unknown_agent/],
    ["an empty message", { targetAgentId: "eden", message: "  " }, "empty_message", /empty/],
    [
      "an over-long message",
      { targetAgentId: "eden", message: "가".repeat(2_001) },
      "message_too_long",
      /멘션을 포함한 메시지가 길이 제한을 넘습니다/,
    ],
    [
      "a channel outside the allowlist",
      { targetAgentId: "eden", message: "hi", channelId: "1400000000000000999" },
      "channel_not_allowed",
      /allowedChannels/,
    ],
  ])("rejects %s with a clear code and sends nothing", async (_label, args, code, text) => {
    const { runtime, discord } = await started();
    const result = await handleDiscordSend(runtime, "ruda", args);
    expect(result).toMatchObject({ ok: false, code });
    expect(result.text).toMatch(text);
    expect(discord.messages).toEqual([]);
  });
});
