import { describe, expect, it } from "vitest";
import type { A2AEvent } from "../../src/index.js";
import { CHANNEL, FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);
const ANNOUNCEMENT = "eden이 배포를 확인했습니다.";

async function announce(to: string, discord = new FakeDiscord()) {
  const gateway = new ScriptedGateway({
    "agent:eden:main": ["확인했습니다, 배포 문제 없습니다.", ANNOUNCEMENT],
  });
  const r = runtime({ stateDir: tempStateDir(), gateway, discord });
  await r.start();
  const events: A2AEvent[] = [];
  r.onEvent((e) => events.push(e));
  const result = await r.sessionsSend({
    requesterSessionKey: "agent:ruda:main",
    targetSessionKey: "agent:eden:main",
    message: "[NOTIFICATION] 배포 끝났어요",
    announceTarget: { channel: "discord", to },
    timeoutSeconds: 60,
  });
  const complete = events.find((e) => e.type === "a2a.complete");
  return { result, discord, complete: complete?.type === "a2a.complete" ? complete.data : undefined };
}

describe("createA2ARuntime: announcements go only to allowed channels", () => {
  it("posts to a channel in discord.collaboration.allowedChannels", async () => {
    const { result, discord, complete } = await announce(`channel:${CHANNEL}`);
    expect(discord.in(CHANNEL).map((m) => m.content)).toEqual([ANNOUNCEMENT]);
    expect(result.announced).toBe(true);
    expect(complete).toMatchObject({ announced: true, announceText: ANNOUNCEMENT });
  });

  it("does not post to any other channel, and says why; the text still reaches the gateway", async () => {
    const { result, discord, complete } = await announce("channel:1400000000000000999");
    expect(discord.messages).toEqual([]);
    expect(result.announced).toBe(false);
    expect(complete).toMatchObject({
      announced: false,
      announceSkipReason: "channel_not_allowed",
      announceText: ANNOUNCEMENT,
    });
  });

  it("reports a post Discord refuses as post_failed with its message", async () => {
    const discord = new FakeDiscord();
    discord.failures.push(Object.assign(new Error("Missing Permissions"), { status: 403 }));
    const { result, complete } = await announce(CHANNEL, discord);
    expect(result.announced).toBe(false);
    expect(complete).toMatchObject({
      announced: false,
      announceSkipReason: "post_failed",
      announceError: "Missing Permissions",
    });
  });
});
