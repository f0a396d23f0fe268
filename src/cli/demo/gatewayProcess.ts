// The first gateway of the demo's kill-and-restart scenario, as its own process so that the demo
// can SIGKILL it mid-wait: it sends one discord_send and then just runs until it is killed.
// Input: the JSON of `GatewayProcessInput` in A2A_DEMO_GATEWAY. Output: JSON lines on stdout.
import { fileURLToPath } from "node:url";
import { createDiscordJsPort } from "../../discord/index.js";
import { createA2ARuntime, type DiscordSendParams } from "../../runtime/index.js";
import type { A2AConfigInput } from "../../policies/index.js";
import { type ClockPace, VirtualClock } from "../../testing/VirtualClock.js";
import { loginBot } from "./cast.js";
import { Timeline } from "./Timeline.js";
import { textLogger } from "../../runtime/logger.js";

export interface GatewayProcessInput {
  stateDir: string;
  config: A2AConfigInput;
  origin: ClockPace;
  asAgentId: string;
  token: string;
  apiUrl?: string;
  send: DiscordSendParams;
  /** The scenarios' claims on the main timeline (key, tag), so this process tags its lines alike. */
  claims: Array<[string, string]>;
}

export type GatewayProcessOutput =
  | { type: "line"; text: string }
  | { type: "sent"; result: unknown; at: number }
  | { type: "failed"; message: string };

/** How to start this file as a process, from the compiled package or from the TypeScript sources. */
export function gatewayProcessCommand(): { file: string; execArgv: string[] } {
  const fromSources = import.meta.url.endsWith(".ts");
  return {
    file: fileURLToPath(new URL(`./gatewayProcess.${fromSources ? "ts" : "js"}`, import.meta.url)),
    execArgv: fromSources ? ["--import", "tsx"] : [],
  };
}

function emit(output: GatewayProcessOutput): void {
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

async function run(input: GatewayProcessInput): Promise<void> {
  // Built from the main process's pace, this clock reads the same demo time.
  const clock = new VirtualClock(input.origin.at);
  clock.run(input.origin);
  const timeline = new Timeline({
    elapsed: () => clock.now() - input.origin.at,
    print: (text) => emit({ type: "line", text }),
    actorPrefix: `[pid ${process.pid}] `,
  });
  for (const [key, tag] of input.claims) timeline.claim(key, tag);
  const client = await loginBot(input.token, input.apiUrl);
  const runtime = createA2ARuntime({
    stateDir: input.stateDir,
    config: input.config,
    discord: createDiscordJsPort({ [input.asAgentId]: client }),
    now: clock.now,
    timers: clock,
    inspect: timeline.inspect,
    logger: textLogger((message) => timeline.note(`warning: ${message}`)),
  });
  runtime.onEvent(timeline.onA2AEvent);
  await runtime.start();
  const result = await runtime.discordSend(input.send);
  // Reported only now: discordSend answers once the snapshot showing the mention is on disk.
  emit({ type: "sent", result, at: clock.now() });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const raw = process.env.A2A_DEMO_GATEWAY;
  if (raw === undefined) {
    console.error("gatewayProcess: A2A_DEMO_GATEWAY is not set (this file is started by the demo)");
    process.exit(2);
  }
  run(JSON.parse(raw) as GatewayProcessInput).catch((error: unknown) => {
    emit({ type: "failed", message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
}
