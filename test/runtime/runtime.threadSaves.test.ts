import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BOTS, CHANNEL, FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";
import { savedThreadEntries, threadStateBytes, writeThreadSegment } from "../support/threadStateFiles.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const HOUR = 3_600_000;
const runtime = useRuntimeHarness(T0);

const THREAD = "1400000000000000700";
const SINK = "1400000000000000800";
const sinkId = (n: number) => String(1_400_000_000_000_100_000n + BigInt(n));

function observerRecord(messageId: string, ts: number) {
  return {
    messageId,
    sender: "eden",
    summary: "요약",
    ts,
    channelId: THREAD,
    threadId: THREAD,
    extractedTokens: { mentions: [], urls: [], prNumbers: [], codeRefs: [] },
  };
}

describe("createA2ARuntime: the thread state is saved change by change", () => {
  it("a save costs the size of the change, not of the state, and registerSinkThread returns once it is on disk", async () => {
    const dir = tempStateDir();
    const r = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await r.start();
    for (let n = 0; n < 300; n++) await r.registerSinkThread(sinkId(n));
    const before = threadStateBytes(dir);
    await r.registerSinkThread(sinkId(300));
    const after = threadStateBytes(dir);
    // Read before anything else runs: on disk when the call returned.
    expect(savedThreadEntries(dir).get(`sink ${sinkId(300)}`)).toBe(true);
    expect(after - before).toBe(`{"c":"sink","k":"${sinkId(300)}","v":true}\n`.length);
    expect(before).toBeGreaterThan(300 * 40);
  });

  it("a collaboration's thread (parent, participants, route) is saved in the background and survives a restart", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await first.stop();
    const saved = savedThreadEntries(dir);
    expect(saved.get(`participants ${sent.threadId}`)).toMatchObject({ agentIds: ["ruda", "eden"] });
    expect(saved.get("route ruda:eden")).toMatchObject({ threadId: sent.threadId });
    expect(saved.get(`parent ${sent.threadId}`)).toMatchObject({ channelId: CHANNEL });

    const second = runtime({ stateDir: dir, discord });
    await second.start();
    const again = await second.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "하나 더",
    });
    expect(again).toMatchObject({ status: "sent", threadId: sent.threadId });
  });
});

describe("createA2ARuntime: a damaged thread state", () => {
  it("starts despite entries of the wrong type: they are quarantined and reported, the rest is used", async () => {
    const dir = tempStateDir();
    writeThreadSegment(dir, [
      ["parent", THREAD, { channelId: CHANNEL, at: T0 }],
      ["parent", "bad", { channelId: 7, at: T0 }],
      ["participants", "x", { agentIds: 5, seenAt: T0 }],
      ["participants", THREAD, { agentIds: ["ruda", "eden"], seenAt: T0 }],
      ["sink", SINK, true],
    ]);
    const warnings: string[] = [];
    const r = runtime({
      stateDir: dir,
      discord: new FakeDiscord(),
      logger: textLogger((m) => warnings.push(m)),
    });
    await r.start();
    expect(warnings).toEqual([
      expect.stringMatching(/2 thread-state entries are invalid; dropped them and kept them in .*quarantine/),
    ]);
    const [kept] = readdirSync(join(dir, "quarantine"));
    const quarantined = JSON.parse(readFileSync(join(dir, "quarantine", kept ?? ""), "utf8")) as {
      entries: Array<{ c: string; k: string; v: unknown; reason: string }>;
    };
    expect(quarantined.entries).toEqual([
      { c: "parent", k: "bad", v: { channelId: 7, at: T0 }, reason: expect.stringMatching(/channelId/) },
      {
        c: "participants",
        k: "x",
        v: { agentIds: 5, seenAt: T0 },
        reason: expect.stringMatching(/agentIds/),
      },
    ]);
    // The valid entries are in use: the sink thread is refused, the thread's participants are known.
    expect(
      await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "hi", threadId: SINK }),
    ).toMatchObject({ status: "rejected", error: { code: "sink_thread" } });
    const decision = await r.handleDiscordMessage({
      messageId: "1400000000000000901",
      channelId: THREAD,
      threadId: THREAD,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: `<@${BOTS.ruda}> 저는 찬성입니다, 진행하시죠`,
      mentionUserIds: [BOTS.ruda],
      ts: T0,
    });
    // The thread's parent is known (the message does not name it), so ruda handles eden's mention.
    expect(decision).toMatchObject({ action: "handle", agentId: "ruda" });
    await r.stop();
    expect(savedThreadEntries(dir).get(`participants ${THREAD}`)).toMatchObject({
      agentIds: ["ruda", "eden"],
    });
    expect(savedThreadEntries(dir).has("parent bad")).toBe(false);
  });
});

describe("createA2ARuntime: expiry at start", () => {
  it("drops the routes, participants and observer records a long stop made stale", async () => {
    const dir = tempStateDir();
    writeThreadSegment(dir, [
      ["participants", THREAD, { agentIds: ["ruda", "eden"], seenAt: T0 - 25 * HOUR }],
      ["route", "ruda:eden", { threadId: THREAD, channelId: CHANNEL, lastUsedAt: T0 - 7 * HOUR }],
      ["observed", `${THREAD} 1400000000000000951`, observerRecord("1400000000000000951", T0 - 25 * HOUR)],
    ]);
    const r = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await r.start();
    expect([...savedThreadEntries(dir).keys()]).toEqual([]);
    const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "새로" });
    expect(sent).toMatchObject({ status: "sent" });
    expect(sent).not.toMatchObject({ threadId: THREAD });
    await r.stop();
    // Nothing of the stale thread is left in the saved thread state.
    expect([...savedThreadEntries(dir).keys()].filter((key) => key.includes(THREAD))).toEqual([]);
  });
});
