import { describe, expect, it } from "vitest";
import { MissingPortError } from "../../src/runtime/MissingPortError.js";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

describe("createA2ARuntime without the port a call needs", () => {
  it("sessionsSend without a gateway throws at the call, naming the option, and starts no flow", async () => {
    const r = runtime({ stateDir: tempStateDir(), discord: new FakeDiscord() });
    await r.start();
    const call = r.sessionsSend({ targetSessionKey: "agent:eden:main", message: "안녕", timeoutSeconds: 30 });
    await expect(call).rejects.toBeInstanceOf(MissingPortError);
    await expect(call).rejects.toMatchObject({ option: "gateway", method: "sessionsSend" });
    await expect(call).rejects.toThrow(/createA2ARuntime\(\{ gateway \}\)/);
    await r.stop();
  });

  it("discordSend without a discord port throws at the call, naming the option, and posts nothing", async () => {
    const r = runtime({ stateDir: tempStateDir(), gateway: new ScriptedGateway() });
    await r.start();
    const call = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    await expect(call).rejects.toBeInstanceOf(MissingPortError);
    await expect(call).rejects.toMatchObject({ option: "discord", method: "discordSend" });
    expect(await r.mentions()).toEqual([]);
    await r.stop();
  });
});
