// Everything an end-to-end scenario needs: the Discord emulator, the fake model, the plugin packed and
// installed into a fresh OpenClaw home as a user installs it, and the gateway process.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type DiscordEmulator,
  type EmulatedMessage,
  emulatorToken,
  startDiscordEmulator,
} from "a2a-statecharts/testing";
import { type FakeModel, type FakeModelScript, startFakeModel } from "../../../src/testing/index.js";
// @ts-expect-error: a plain .mjs script without types
import { packOpenClawPlugin } from "../../../../../scripts/pack-openclaw-plugin.mjs";
import { AGENTS, IDS, openclawConfig } from "./openclawConfig.js";
import { OpenClawGateway, openclawInstalled } from "./openclawGateway.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True once ruda's bot reacted to the message (OpenClaw's acknowledgement that it took the message). */
function acknowledged(emulator: DiscordEmulator, messageId: string): boolean {
  const message = emulator.messages(IDS.channel).find((m) => m.id === messageId);
  return message?.reactions?.some((r) => r.userIds.includes(IDS.bots.ruda)) ?? false;
}

/** A free TCP port on 127.0.0.1, for the gateway's own HTTP server. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Harness {
  dir: string;
  emulator: DiscordEmulator;
  model: FakeModel;
  gateway: OpenClawGateway;
  /**
   * Starts the gateway and waits until OpenClaw's bots and the plugin's are all connected, and OpenClaw
   * takes messages. With `plugin: false`, the plugin is expected to refuse its config (it logs why).
   */
  start(o?: { plugin?: boolean }): Promise<void>;
  /** Replaces the plugin's config in OpenClaw's config file (for the next start). */
  setPluginConfig(config: unknown): void;
  /** The plugin's event log (coordination-events.ndjson), parsed. */
  events(): Array<{ type: string; ts: number; data: Record<string, unknown> }>;
  /** Waits until `find` returns a message of the emulator's; fails with what was posted. */
  waitForMessage(
    find: (messages: EmulatedMessage[]) => EmulatedMessage | undefined,
    timeoutMs: number,
  ): Promise<EmulatedMessage>;
  close(): Promise<void>;
}

export async function startHarness(o: {
  pluginConfig: Record<string, unknown>;
  script: FakeModelScript;
}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-openclaw-e2e-"));
  const paths = await openclawInstalled();
  const tarball = (await packOpenClawPlugin({ out: join(dir, "pack"), bundleLibrary: true })) as string;
  // Message times (their snowflakes) on a clock a step of the machine's wall clock cannot move: the
  // scenarios compare them to the second, and a VM's clock may be stepped while a test runs.
  const origin = Date.now() - performance.now();
  const emulator = await startDiscordEmulator({
    now: () => Math.floor(origin + performance.now()),
    guildId: IDS.guild,
    channels: [{ id: IDS.channel, name: "general" }],
    users: [
      { id: IDS.bots.ruda, name: "ruda", bot: true },
      { id: IDS.bots.eden, name: "eden", bot: true },
      { id: IDS.human, name: "alice", bot: false },
    ],
  });
  const model = await startFakeModel({ script: o.script });
  const port = await freePort();
  // eden's token is a secret reference to the environment, as operators keep tokens out of the file.
  const gateway = new OpenClawGateway({
    paths,
    dir,
    port,
    discordApiUrl: emulator.apiBaseUrl,
    env: { A2A_E2E_EDEN_TOKEN: emulatorToken(IDS.bots.eden) },
  });
  const config = openclawConfig({
    dir,
    gatewayPort: port,
    modelBaseUrl: model.baseUrl,
    tokens: {
      ruda: emulatorToken(IDS.bots.ruda),
      eden: { source: "env", provider: "default", id: "A2A_E2E_EDEN_TOKEN" },
    },
    pluginConfig: o.pluginConfig,
  });
  // As a user does: OpenClaw configured, then the plugin installed from its tarball alone, then its config.
  const entries = (config.plugins as { entries: Record<string, unknown> }).entries;
  const pluginEntry = entries["a2a-statecharts"];
  delete entries["a2a-statecharts"];
  gateway.writeConfig(config);
  await gateway.cli(["plugins", "install", "--force", "--accept-capabilities", `npm-pack:${tarball}`]);
  const installed = gateway.readConfig() as { plugins: { entries: Record<string, unknown> } };
  installed.plugins.entries["a2a-statecharts"] = pluginEntry;
  gateway.writeConfig(installed);

  const harness: Harness = {
    dir,
    emulator,
    model,
    gateway,
    async start({ plugin = true } = {}) {
      gateway.start();
      await gateway.waitForLog(
        plugin ? /a2a-statecharts: started for agents/ : /a2a-statecharts: invalid config: /,
        240_000,
      );
      const deadline = Date.now() + 240_000;
      // Each bot twice: OpenClaw's own Discord client and the plugin's.
      while (AGENTS.some((agent) => emulator.connectedBots(IDS.bots[agent]) < (plugin ? 2 : 1))) {
        if (Date.now() > deadline)
          throw new Error(`OpenClaw's Discord bots did not connect:\n${gateway.log().slice(-4000)}`);
        await sleep(250);
      }
      // A connected client may not have processed READY yet, and a message it gets before then is lost.
      // OpenClaw acknowledges a message it will answer with a reaction: probe until one is acknowledged.
      for (let probe = 1; ; probe++) {
        const { messageId } = await emulator.postAsUser({
          userId: IDS.human,
          channelId: IDS.channel,
          content: `<@${IDS.bots.ruda}> readiness probe ${probe}`,
        });
        const until = Date.now() + 5_000;
        while (Date.now() < until && !acknowledged(emulator, messageId)) await sleep(100);
        if (acknowledged(emulator, messageId)) break;
        if (Date.now() > deadline)
          throw new Error(`OpenClaw never acknowledged a mention:\n${gateway.log().slice(-4000)}`);
      }
    },
    setPluginConfig(pluginConfig) {
      const current = gateway.readConfig() as { plugins: { entries: Record<string, { config?: unknown }> } };
      const entry = current.plugins.entries["a2a-statecharts"];
      if (entry === undefined) throw new Error("the plugin is not in OpenClaw's config");
      entry.config = pluginConfig;
      gateway.writeConfig(current);
    },
    events() {
      let text: string;
      try {
        text = readFileSync(join(gateway.stateDir, "a2a-statecharts", "coordination-events.ndjson"), "utf8");
      } catch {
        return [];
      }
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as { type: string; ts: number; data: Record<string, unknown> });
    },
    async waitForMessage(find, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = find(emulator.messages());
        if (found !== undefined) return found;
        if (Date.now() > deadline) {
          const posted = emulator
            .messages()
            .map((m) => `${m.channelId} ${m.authorId}: ${m.content.slice(0, 120)}`);
          throw new Error(
            `message not posted in ${timeoutMs} ms; posted:\n${posted.join("\n")}\n--- gateway log:\n${gateway.log().slice(-3000)}`,
          );
        }
        await sleep(200);
      }
    },
    async close() {
      await gateway.kill("SIGTERM");
      await model.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
