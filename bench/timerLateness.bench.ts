// Does a faulty gateway starve the other actors? A gateway whose agentWait answers "timeout" at once
// (a dead run, a proxy that returns early) used to make the reply wait loop without end and starve the
// event loop, so no other actor's timer fired. This measures, with real timers and a real lowdb state
// dir, how late a mention's reminder is posted: alone, and while a sessionsSend with such a gateway
// runs beside it; and how many agentWait calls that sessionsSend makes before it ends.
// Run: npx tsx bench/timerLateness.bench.ts [--rounds N] [--timeout-ms N]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createA2ARuntime, type DiscordPort, type GatewayPort } from "../src/index.js";
import { textLogger } from "../src/runtime/logger.js";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return (at >= 0 ? process.argv[at + 1] : undefined) ?? fallback;
}

const ROUNDS = Number(option("rounds", "10"));
const MENTION_TIMEOUT_MS = Number(option("timeout-ms", "300"));
const CHANNEL = "1400000000000000100";
const RUDA = "1400000000000000001";
const EDEN = "1400000000000000002";

/** Discord in memory: records when the mention landed and when the reminder post started. */
function timedDiscord() {
  let next = 1_500_000_000_000_000_000n;
  const times = { mentionLanded: Number.NaN, reminderStarted: Number.NaN };
  const port: DiscordPort = {
    async sendMessage(p) {
      // The first reminder only: later ones (and the escalation) follow it while the flow runs on.
      if (p.content.startsWith("[리마인더 1/") && Number.isNaN(times.reminderStarted)) {
        times.reminderStarted = performance.now();
      }
      next += 1n;
      if (p.content.startsWith(`<@${EDEN}>`)) times.mentionLanded = performance.now();
      return { messageId: String(next) };
    },
    async createThread(p) {
      return { threadId: p.fromMessageId ?? String((next += 1n)) };
    },
  };
  return { port, times };
}

/** A gateway whose every wait answers "timeout" at once. */
function instantTimeoutGateway() {
  let runs = 0;
  let waits = 0;
  const port: GatewayPort = {
    agent: async () => ({ runId: `run-${(runs += 1)}` }),
    agentWait: async () => ((waits += 1), { status: "timeout" }),
    readLatestAssistantReply: async () => undefined,
  };
  return { port, calls: () => waits };
}

async function round(withFaultyFlow: boolean) {
  const dir = await mkdtemp(join(tmpdir(), "a2a-bench-lateness-"));
  const discord = timedDiscord();
  const gateway = instantTimeoutGateway();
  const runtime = createA2ARuntime({
    stateDir: dir,
    config: {
      agents: { ruda: { discordBotId: RUDA }, eden: { discordBotId: EDEN } },
      discord: {
        a2aRetry: { responseTimeoutMs: MENTION_TIMEOUT_MS },
        collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
      },
    },
    gateway: gateway.port,
    discord: discord.port,
    logger: textLogger(() => {}),
  });
  await runtime.start();
  try {
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    if (sent.status !== "sent") throw new Error(`discordSend: ${JSON.stringify(sent)}`);
    const flowStarted = performance.now();
    const flow = withFaultyFlow
      ? runtime.sessionsSend({ targetSessionKey: "agent:eden:main", message: "안녕?", timeoutSeconds: 60 })
      : undefined;
    const flowResult = await flow;
    const flowMs = performance.now() - flowStarted;
    while (Number.isNaN(discord.times.reminderStarted)) await new Promise((r) => setTimeout(r, 5));
    return {
      lateMs: discord.times.reminderStarted - (discord.times.mentionLanded + MENTION_TIMEOUT_MS),
      flowMs,
      flowStatus: flowResult ? `${flowResult.status} (${flowResult.error?.code ?? "no error"})` : "-",
      agentWaits: gateway.calls(),
    };
  } finally {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `median ${at(0.5).toFixed(1)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms`;
}

const alone: number[] = [];
const beside: number[] = [];
let last: Awaited<ReturnType<typeof round>> | undefined;
for (let i = 0; i < ROUNDS; i++) {
  alone.push((await round(false)).lateMs);
  last = await round(true);
  beside.push(last.lateMs);
}
console.log(`reminder due ${MENTION_TIMEOUT_MS} ms after the mention, ${ROUNDS} rounds each, real timers`);
console.log("| case | reminder lateness |");
console.log("|---|---|");
console.log(`| alone | ${summary(alone)} |`);
console.log(`| beside a sessionsSend whose gateway answers timeout at once | ${summary(beside)} |`);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? Number.NaN;
console.log(
  `ratio of medians (beside / alone): ${(median(beside) / Math.max(median(alone), 0.1)).toFixed(2)}`,
);
if (last !== undefined) {
  console.log(
    `that sessionsSend: ${last.flowStatus} after ${last.agentWaits} agentWait calls, ${(last.flowMs / 1000).toFixed(2)} s ` +
      "(its backoff before the resend included)",
  );
}
