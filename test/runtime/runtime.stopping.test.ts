import { describe, expect, it } from "vitest";
import type { InboundDiscordMessage } from "../../src/index.js";
import { BOTS, CHANNEL, FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

const message = (n: number): InboundDiscordMessage => ({
  messageId: String(1_700_000_000_000_000_000n + BigInt(n)),
  channelId: CHANNEL,
  authorId: "1400000000000000900", // a human
  authorIsBot: false,
  content: `<@${BOTS.eden}> 확인 부탁`,
  mentionUserIds: [BOTS.eden],
  ts: T0,
});

describe("createA2ARuntime: messages that arrive while it stops", () => {
  it("are dropped with the reason `stopping`, during stop() and after it, instead of throwing", async () => {
    const r = runtime({
      stateDir: tempStateDir(),
      gateway: new ScriptedGateway(),
      discord: new FakeDiscord(),
    });
    await r.start();
    expect(await r.handleDiscordMessage(message(1))).toMatchObject({ action: "handle", agentId: "eden" });
    const stopped = r.stop();
    expect(await r.handleDiscordMessage(message(2))).toEqual({ action: "drop", reason: "stopping" });
    await stopped;
    expect(await r.handleDiscordMessage(message(3))).toEqual({ action: "drop", reason: "stopping" });
  });

  it("a runtime never started still throws: a message before start() is a wiring mistake", async () => {
    const r = runtime({ stateDir: tempStateDir(), discord: new FakeDiscord() });
    await expect(r.handleDiscordMessage(message(1))).rejects.toThrow(/call start\(\) first/);
  });
});
