import { afterEach, describe, expect, it } from "vitest";
import { handleDiscordSend } from "../../src/discord/index.js";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import { messageCatalog } from "../../src/policies/messages/messageCatalog.js";
import { FakeDiscord, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

// The tool answers the agent in the runtime's language (config.locale and config.messages), or in the
// catalog the gateway passes.

const running: A2ARuntime[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function started(config: object) {
  const runtime = createA2ARuntime({
    config: { ...runtimeConfig, ...config },
    stateDir: tempStateDir(),
    discord: new FakeDiscord(),
    logger: textLogger(() => {}),
  });
  running.push(runtime);
  await runtime.start();
  return runtime;
}

const send = { targetAgentId: "eden", message: "코드 리뷰 해줘" };
const unknownTarget = { targetAgentId: "nobody", message: "hi" };

describe("discord_send's answer", () => {
  it.each([
    ["ko", (threadId: string) => `메시지 전송 완료. 스레드 ID: ${threadId}`],
    ["en", (threadId: string) => `Message sent. Thread ID: ${threadId}`],
  ] as const)("once sent, in %s", async (locale, text) => {
    const result = await handleDiscordSend(await started({ locale }), "ruda", send);
    if (!result.ok) throw new Error(result.text);
    expect(result.text).toBe(text(result.threadId));
  });

  it.each([
    ["ko", "discord_send: unknown_agent: the target is not a configured agent"],
    ["en", "discord_send was rejected (unknown_agent): the target is not a configured agent"],
  ] as const)("when rejected, in %s", async (locale, text) => {
    const result = await handleDiscordSend(await started({ locale }), "ruda", unknownTarget);
    expect(result).toEqual({ ok: false, code: "unknown_agent", text });
  });

  it.each([
    ["ko", "discord_send: empty_message: 메시지가 비어 있습니다"],
    ["en", "discord_send was rejected (empty_message): the message is empty"],
  ] as const)("gives the runtime's own reason in %s", async (locale, text) => {
    const result = await handleDiscordSend(await started({ locale }), "ruda", {
      targetAgentId: "eden",
      message: " ",
    });
    expect(result).toEqual({ ok: false, code: "empty_message", text });
  });

  it("follows the config's overrides", async () => {
    const runtime = await started({ locale: "en", messages: { discordSendSent: "OK, thread {threadId}" } });
    const result = await handleDiscordSend(runtime, "ruda", send);
    if (!result.ok) throw new Error(result.text);
    expect(result.text).toBe(`OK, thread ${result.threadId}`);
  });

  it("is in the catalog passed as an option, whatever the runtime's", async () => {
    const runtime = await started({ locale: "ko" });
    const result = await handleDiscordSend(runtime, "ruda", unknownTarget, {
      messages: messageCatalog({ locale: "en" }),
    });
    expect(result.text).toMatch(/^discord_send was rejected \(unknown_agent\)/);
  });

  it("is Korean for a runtime that does not say its language (only discordSend)", async () => {
    const runtime = await started({ locale: "en" });
    const result = await handleDiscordSend({ discordSend: (p) => runtime.discordSend(p) }, "ruda", send);
    if (!result.ok) throw new Error(result.text);
    expect(result.text).toBe(`메시지 전송 완료. 스레드 ID: ${result.threadId}`);
  });
});
