// The plugin's service on the Discord emulator, without OpenClaw: what OpenClaw hands it (its config,
// a state dir, a logger, `api.runtime.subagent`) is given by the test.
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DiscordEmulator, emulatorToken, startDiscordEmulator } from "a2a-statecharts/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createA2AService, discordRestApi } from "../src/a2aService.js";
import type { OpenClawConfigShape, ServiceContext, SubagentRuntime } from "../src/openclawApi.js";
import { createA2ASendTool, createDiscordSendTool } from "../src/tools.js";

const GUILD = "1500000000000000001";
const CHANNEL = "1500000000000000010";
const RUDA = "1500000000000000101";
const EDEN = "1500000000000000102";
const HUMAN = "1500000000000000900";

const openclaw: OpenClawConfigShape = {
  bindings: [
    { agentId: "ruda", match: { channel: "discord", accountId: "ruda" } },
    { agentId: "eden", match: { channel: "discord", accountId: "eden" } },
  ],
  channels: {
    discord: { accounts: { ruda: { token: emulatorToken(RUDA) }, eden: { token: emulatorToken(EDEN) } } },
  },
};

/** eden answers every run; the runs are recorded. */
function answeringSubagent(runs: unknown[]): SubagentRuntime {
  return {
    run: async (p) => {
      runs.push(p);
      return { runId: `run-${runs.length}` };
    },
    waitForRun: async () => ({ status: "ok", terminalReply: { disposition: "visible", text: "On it." } }),
    getSessionMessages: async () => ({ messages: [] }),
  };
}

let emulator: DiscordEmulator;
let stateDir: string;
const logged: string[] = [];
const context = (): ServiceContext => ({
  config: openclaw,
  stateDir,
  logger: {
    info: (m) => logged.push(`info ${m}`),
    warn: (m) => logged.push(`warn ${m}`),
    error: (m) => logged.push(`error ${m}`),
  },
});

beforeAll(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "general" }],
    users: [
      { id: RUDA, name: "ruda", bot: true },
      { id: EDEN, name: "eden", bot: true },
      { id: HUMAN, name: "alice", bot: false },
    ],
  });
  process.env.DISCORD_API_URL = emulator.apiBaseUrl;
  stateDir = mkdtempSync(join(tmpdir(), "a2a-openclaw-service-"));
});

afterAll(async () => {
  delete process.env.DISCORD_API_URL;
  await emulator.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("the plugin's service", () => {
  it("takes discord.js's API base from OpenClaw's DISCORD_API_URL", () => {
    expect(discordRestApi({ DISCORD_API_URL: "http://127.0.0.1:5/api/v10/" })).toBe("http://127.0.0.1:5/api");
    expect(discordRestApi({})).toBeUndefined();
  });

  it("with a bad config starts nothing, logs the key at fault, and the tools say why", async () => {
    const { service, host } = createA2AService({
      pluginConfig: { maxAttempts: 99 },
      subagent: answeringSubagent([]),
    });
    await service.start(context());
    expect(logged.at(-1)).toMatch(/^error .*plugins\.entries\.a2a-statecharts\.config\.maxAttempts/);
    const answer = await createDiscordSendTool(host, { agentId: "ruda" })?.execute("c", {
      targetAgentId: "eden",
      message: "x",
    });
    expect(answer?.content[0]?.text).toMatch(/unavailable: .*maxAttempts/);
    await service.stop?.(context());
  });

  it("runs the runtime for every load of the plugin in the process; a bot's mention is answered by the plugin, once", async () => {
    const runs: unknown[] = [];
    // OpenClaw registers the plugin several times: the tools of one load, the service of another.
    const started = createA2AService({
      pluginConfig: { channelId: CHANNEL },
      subagent: answeringSubagent(runs),
    });
    const other = createA2AService({ pluginConfig: { channelId: CHANNEL }, subagent: answeringSubagent([]) });
    await started.service.start(context());
    expect(logged.at(-1)).toBe("info a2a-statecharts: started for agents ruda, eden");
    // A second start in the same process (another load's service) is refused, not a second runtime.
    await other.service.start(context());
    expect(logged.at(-1)).toMatch(/already running in this process/);

    const tool = createDiscordSendTool(other.host, { agentId: "ruda" });
    const sent = await tool?.execute("c", { targetAgentId: "eden", message: "Is the build green?" });
    const threadId = (sent?.details as { threadId: string }).threadId;
    await expect
      .poll(
        () =>
          emulator
            .messages(threadId)
            .filter((m) => m.authorId === EDEN)
            .map((m) => m.content),
        { timeout: 10_000 },
      )
      .toEqual(["On it."]);
    expect(runs).toEqual([
      expect.objectContaining({ sessionKey: `agent:eden:discord:channel:${threadId}`, deliver: false }),
    ]);
    await started.service.stop?.(context());
    const after = await tool?.execute("c", { targetAgentId: "eden", message: "again?" });
    expect(after?.content[0]?.text).toMatch(/unavailable: the a2a-statecharts service has stopped/);
  });

  it("runs agents outside the tool call that started the flow (OpenClaw refuses a run whose caller's turn has ended)", async () => {
    // OpenClaw keeps the calling tool turn in async-local state; a run made in it after the turn ended fails.
    const turn = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const subagent: SubagentRuntime = {
      run: async () => {
        seen.push(turn.getStore());
        return { runId: `run-${seen.length}` };
      },
      waitForRun: async () => {
        seen.push(turn.getStore());
        return { status: "ok", terminalReply: { disposition: "visible", text: "Noted, thanks." } };
      },
      getSessionMessages: async () => ({ messages: [] }),
    };
    const { service, host } = createA2AService({ pluginConfig: { channelId: CHANNEL }, subagent });
    await service.start(context());
    const tool = createA2ASendTool(host, { agentId: "ruda", sessionKey: "agent:ruda:main" });
    const result = await turn.run("ruda's tool turn", () =>
      tool?.execute("c", { targetAgentId: "eden", message: "FYI: the deploy is done.", timeoutSeconds: 30 }),
    );
    expect(result?.details).toMatchObject({ status: "ok", reply: "Noted, thanks." });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((store) => store !== undefined)).toEqual([]);
    await service.stop?.(context());
  });
});
