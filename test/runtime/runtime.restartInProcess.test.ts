import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_LOG_FILE } from "../../src/runtime/EventLog.js";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

describe("one runtime stopped and started again in the same process", () => {
  it("logs each event once, to the open log, whatever the number of restarts", async () => {
    const dir = tempStateDir();
    const warnings: string[] = [];
    const r = runtime({
      stateDir: dir,
      gateway: new ScriptedGateway(),
      discord: new FakeDiscord(),
      logger: textLogger((message) => warnings.push(message)),
    });
    for (let round = 0; round < 3; round++) {
      await r.start();
      if (round < 2) await r.stop();
    }
    // Refused before any Discord call, and logged as a2a.collaborate.failed.
    const refused = await r.discordSend({
      fromAgentId: "nobody",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    expect(refused).toMatchObject({ status: "rejected", error: { code: "unknown_agent" } });
    await r.stop();

    expect(warnings.filter((w) => w.includes("event log"))).toEqual([]);
    const logged = readFileSync(join(dir, EVENT_LOG_FILE), "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(logged.filter((type) => type === "a2a.collaborate.failed")).toHaveLength(1);
  });

  it("posts again after a restart: stop() closes the Discord rate limiters, start() opens them again", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), gateway: new ScriptedGateway(), discord });
    await r.start();
    await r.stop();
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(sent).toMatchObject({ status: "sent" });
    expect(discord.messages.some((m) => m.content.includes("코드 리뷰 해줘"))).toBe(true);
    await r.stop();
  });
});
