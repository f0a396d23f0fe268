import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { AGENT_IDS, type DemoAgentId, type RealDiscordTarget } from "./demo/cast.js";
import { type DemoOptions, type DemoReport, runDemo } from "./demo/runDemo.js";
import { demoStamp } from "./demo/Timeline.js";
import { type CliIO, orReport, readCommandLine, UsageError } from "./io.js";

const DEMO_USAGE = `Usage: a2a-statecharts demo [options]

Plays the designs' scenarios on the whole control plane: the bundled Discord emulator, three agent
bots (ruda, eden, seum) with scripted agents behind a GatewayPort, a human, and a runtime on a lowdb
state dir, in accelerated time. Exits 1 if any scenario does not reach its expected end.

Options:
  --speed N               demo time runs N× real time (default 60: the 15-minute escalation takes 15 s)
  --state-dir DIR         where the runtime keeps its state (default .a2a-demo; wiped at the start,
                          kept afterwards for \`a2a-statecharts status --state-dir DIR\`)
  --response-timeout S    seconds before a reminder (default 300; 20 with real Discord)

Real Discord (instead of the emulator; time then runs at real speed):
  --token AGENT=TOKEN     a bot token for ruda, eden and seum (or A2A_DISCORD_TOKEN_RUDA, …_EDEN, …_SEUM)
  --channel ID            the channel the bots collaborate in (or A2A_DISCORD_CHANNEL)
  --human ID              the user to escalate to (or A2A_DISCORD_HUMAN; optional)
  --discord-api URL       a Discord-compatible API instead of discord.com (e.g. an emulator)
  -h, --help`;

export const DEMO_OPTIONS = {
  speed: { type: "string" },
  "state-dir": { type: "string" },
  "response-timeout": { type: "string" },
  token: { type: "string", multiple: true },
  channel: { type: "string" },
  human: { type: "string" },
  "discord-api": { type: "string" },
} as const;

function positiveNumber(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new UsageError(`${flag} must be a number above 0, got "${raw}"`);
  return value;
}

/** The demo's flags as parseArgs reads them. */
type DemoValues = {
  [K in keyof typeof DEMO_OPTIONS]?: (typeof DEMO_OPTIONS)[K] extends { multiple: true } ? string[] : string;
};

function realDiscordTarget(values: DemoValues): RealDiscordTarget | undefined {
  const env = process.env;
  const tokens: Partial<Record<DemoAgentId, string>> = {};
  for (const id of AGENT_IDS) {
    const fromEnv = env[`A2A_DISCORD_TOKEN_${id.toUpperCase()}`];
    if (fromEnv !== undefined && fromEnv !== "") tokens[id] = fromEnv;
  }
  for (const pair of values.token ?? []) {
    const [agent, ...rest] = pair.split("=");
    const token = rest.join("=");
    if (!AGENT_IDS.includes(agent as DemoAgentId) || token === "") {
      throw new UsageError(
        `--token must be AGENT=TOKEN with AGENT one of ${AGENT_IDS.join(", ")}, got "${pair}"`,
      );
    }
    tokens[agent as DemoAgentId] = token;
  }
  const channelId = values.channel ?? env.A2A_DISCORD_CHANNEL;
  const humanId = values.human ?? env.A2A_DISCORD_HUMAN;
  if (Object.keys(tokens).length === 0 && channelId === undefined) {
    if (values["discord-api"] !== undefined)
      throw new UsageError("--discord-api needs --token and --channel");
    return undefined;
  }
  const missing = AGENT_IDS.filter((id) => tokens[id] === undefined);
  if (missing.length > 0)
    throw new UsageError(`real Discord needs a token for every agent; missing: ${missing.join(", ")}`);
  if (channelId === undefined) throw new UsageError("real Discord needs --channel (or A2A_DISCORD_CHANNEL)");
  return {
    tokens: tokens as Record<DemoAgentId, string>,
    channelId,
    ...(humanId === undefined || humanId === "" ? {} : { humanId }),
    ...(values["discord-api"] === undefined ? {} : { apiUrl: values["discord-api"] }),
  };
}

/** The demo's options from its parsed flags, printing to `io`; a UsageError names a bad one. */
export function demoOptionsFrom(values: DemoValues, io: CliIO): DemoOptions {
  const discord = realDiscordTarget(values);
  if (discord !== undefined && values.speed !== undefined && Number(values.speed) !== 1) {
    throw new UsageError("--speed must be 1 with real Discord: its messages carry real time");
  }
  const responseTimeoutS = positiveNumber(
    "--response-timeout",
    values["response-timeout"],
    discord === undefined ? 300 : 20,
  );
  return {
    speed: discord === undefined ? positiveNumber("--speed", values.speed, 60) : 1,
    stateDir: values["state-dir"] ?? ".a2a-demo",
    ...(discord === undefined ? {} : { discord }),
    responseTimeoutMs: Math.round(responseTimeoutS * 1000),
    print: io.out,
    ...(io.status === undefined ? {} : { progress: io.status }),
  };
}

/** `a2a-statecharts demo`: parses the flags, runs, prints the summary. */
export async function runDemoCommand(argv: string[], io: CliIO): Promise<number> {
  const options = readCommandLine(io, "demo", DEMO_USAGE, argv, DEMO_OPTIONS, ({ values }) =>
    demoOptionsFrom(values, io),
  );
  if (typeof options === "number") return options;
  return playDemo(options, io, "demo");
}

/** Runs the demo and prints its summary: 0 when every scenario reached its expected end. */
export async function playDemo(options: DemoOptions, io: CliIO, command: string): Promise<number> {
  const report = await orReport(io, runDemo(options), (message) => `a2a-statecharts ${command}: ${message}`);
  if (report === undefined) return 1;
  for (const line of await summary(report)) io.out(line);
  return report.outcomes.every((o) => o.passed) ? 0 : 1;
}

async function filesIn(dir: string, what: string, extension: string): Promise<string> {
  let count = 0;
  try {
    count = (await readdir(dir)).filter((name) => name.endsWith(extension)).length;
  } catch {
    // No such directory yet: nothing was written there.
  }
  return `${count} ${what}${count === 1 ? "" : "s"}`;
}

async function summary(report: DemoReport): Promise<string[]> {
  const rows = report.outcomes.map((o) => [
    o.skipped !== undefined ? "–" : o.passed ? "✔" : "✘",
    o.title,
    o.skipped !== undefined
      ? `skipped: ${o.skipped}`
      : o.passed
        ? o.actual
        : `${o.actual} (expected: ${o.expected})`,
  ]);
  const width = Math.max(...rows.map((r) => (r[1] ?? "").length));
  const f = report.figures;
  const dir = relative(process.cwd(), report.stateDir) || ".";
  const played = report.outcomes.filter((o) => o.skipped === undefined);
  const failed = played.filter((o) => !o.passed).length;
  return [
    "",
    "Summary",
    ...rows.map(([mark, title, end]) => `  ${mark} ${(title ?? "").padEnd(width)}  ${end}`),
    "",
    `  flows ${f.flows.flows} · retries ${f.retries.total} · LLM calls ${report.llmCalls} · turns saved ${f.flows.saved} ` +
      `(against a fixed 5 per flow) · collaborations ${report.collaborations} · reminders ${f.mentions.reminders} · ` +
      `escalations ${f.mentions.escalated} · state transitions ${report.transitions}`,
    `  demo time ${demoStamp(report.demoMs)} in ${(report.realMs / 1000).toFixed(1)} s real`,
    `  state lives in ${report.stateDir}: ${await filesIn(join(report.stateDir, "actors"), "actor shard", ".json")}, ` +
      `${await filesIn(join(report.stateDir, "archive"), "archive hour", ".ndjson")}, threads/, coordination-events.ndjson`,
    `  see it with: npx a2a-statecharts status --state-dir ${dir}`,
    "",
    `scenarios: ${played.length - failed} reached their expected end, ${failed} did not` +
      (played.length < report.outcomes.length ? `, ${report.outcomes.length - played.length} skipped` : ""),
  ];
}
