// The PostgreSQL store against lowdb, in one run: gateway processes (test/postgres/fixtures/
// gatewayProcess.ts), each a runtime with its own state directory and the same closed-loop load.
//  (a) transitions/s and persistence lag p50/p99: lowdb (1 process), PostgreSQL with 1, 2 and 4
//      processes on one database. Each process keeps CONCURRENCY discordSend calls in flight for the
//      measured window (a collaboration each: thread, mention, and, with a 2 s response timeout,
//      reminders and escalations falling due during the load). Discord is in-process and instant, so
//      the runtime and its store are what is measured. Transitions: machine state value changes
//      (inspection events), summed over the processes, per second of the window. Persistence lag: the
//      runtime's own `a2a.persistence.lag` histogram (from a change queued to durable), raw values.
//  (b) takeover after a SIGKILL: two processes stay up; a third sends 10 collaborations whose first
//      reminder is due in 1 s and is SIGKILLed as soon as they are acknowledged. Takeover = from the
//      kill until a surviving process posts the first (and the last) of those reminders: the actors
//      claimed, restored and their overdue timers fired. Repeated KILLS times with a fresh victim.
// A throwaway PostgreSQL server (test/support/postgres.ts; fsync off, synchronous_commit on) runs here.
// (a) runs ROUNDS rounds, the scenarios interleaved: transitions/s is the median round (range
// beside it), lag quantiles are over the samples of every round.
// Run: npx tsx bench/postgres.bench.ts [--seconds S] [--concurrency N] [--rounds N] [--kills N] [--lease-ms MS]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startPostgres } from "../test/support/postgres.js";
import { GatewayChild, killAll } from "../test/postgres/fixtures/gatewayChild.js";
import type { GatewaySettings, GatewayStats } from "../test/postgres/fixtures/gatewayProtocol.js";
import { printTable } from "./table.js";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive whole number`);
  return value;
}

const LOAD_MS = option("seconds", 8) * 1000;
const WARMUP_MS = 1_000;
const CONCURRENCY = option("concurrency", 8);
const KILLS = option("kills", 20);
/** Each load scenario runs once per round, the scenarios interleaved, so a burst of other work on the machine touches all of them. */
const ROUNDS = option("rounds", 3);
/** Shorter than the 10 s default so that 20 takeovers fit in a run; takeover scales with it. */
const LEASE_MS = option("lease-ms", 2_000);
const VICTIM_SENDS = 10;

const CHANNEL = "1700000000000000010";
const HUMAN = "1700000000000000900";
const config = (responseTimeoutMs: number) => ({
  agents: {
    ruda: { discordBotId: "1700000000000000101", name: "루다" },
    eden: { discordBotId: "1700000000000000102", name: "이든" },
  },
  discord: {
    a2aRetry: { responseTimeoutMs, maxAttempts: 3, escalationMentionId: HUMAN },
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      loopGuard: { maxCollaboratePerPair: 10_000_000, maxMessagesPerThread: 10_000_000 },
      rateLimit: { threadCreationPerMinute: 10_000_000, messagePerChannelPerSecond: 10_000_000 },
    },
  },
});

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const ms = (value: number) => `${value.toFixed(value >= 100 ? 0 : 1)} ms`;
const int = (value: number) => Math.round(value).toLocaleString("en-US");
const times = (value: number) => `${value.toFixed(2)}×`;

const dirs: string[] = [];
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "a2a-bench-pg-"));
  dirs.push(dir);
  return dir;
}

/** One run of a load scenario. */
interface LoadRun {
  transitionsPerS: number;
  sendsPerS: number;
  lags: number[];
}

async function measureLoad(
  label: string,
  processes: number,
  store: GatewaySettings["store"],
): Promise<LoadRun> {
  const children: GatewayChild[] = [];
  for (let i = 0; i < processes; i++) {
    children.push(
      new GatewayChild(`${label}.${i}`, {
        stateDir: await stateDir(),
        store,
        discord: { kind: "memory" },
        config: config(2_000),
        measure: true,
      }),
    );
  }
  await Promise.all(children.map((c) => c.ready));
  const load = (ms: number, prefix: string) =>
    Promise.all(
      children.map((c, i) =>
        c.call({
          method: "load",
          args: {
            ms,
            concurrency: CONCURRENCY,
            fromAgentId: i % 2 === 0 ? "ruda" : "eden",
            targetAgentId: i % 2 === 0 ? "eden" : "ruda",
            topicPrefix: `${prefix}-${i}`,
          },
        }),
      ),
    );
  await load(WARMUP_MS, "warm");
  await Promise.all(children.map((c) => c.call({ method: "stats" }))); // drops the warm-up's figures
  const started = performance.now();
  await load(LOAD_MS, "load");
  const seconds = (performance.now() - started) / 1000;
  const stats = await Promise.all(children.map((c) => c.call<GatewayStats>({ method: "stats" })));
  await Promise.all(children.map((c) => c.stop()));
  const lags = stats.flatMap((s) => s.lags);
  const rejected = stats.reduce((sum, s) => sum + s.rejected, 0);
  if (rejected > 0) throw new Error(`${label}: ${rejected} sends rejected under load`);
  const run = {
    transitionsPerS: stats.reduce((sum, s) => sum + s.transitions, 0) / seconds,
    sendsPerS: stats.reduce((sum, s) => sum + s.sends, 0) / seconds,
    lags,
  };
  console.log(
    `${label} × ${processes}: ${int(run.transitionsPerS)} transitions/s, lag p50 ${ms(quantile(lags, 0.5))}, p99 ${ms(quantile(lags, 0.99))}`,
  );
  return run;
}

/** (b): per kill, ms from the SIGKILL to the first and to the last of the victim's reminders posted elsewhere. */
async function measureTakeover(connectionString: string): Promise<Array<{ first: number; last: number }>> {
  const settings = async (): Promise<GatewaySettings> => ({
    stateDir: await stateDir(),
    store: { kind: "postgres", connectionString, leaseMs: LEASE_MS },
    discord: { kind: "memory" },
    config: config(1_000),
    reportPosts: true,
  });
  const survivors = [
    new GatewayChild("survivor.0", await settings()),
    new GatewayChild("survivor.1", await settings()),
  ];
  await Promise.all(survivors.map((c) => c.ready));
  const victimDir = await stateDir();
  const results: Array<{ first: number; last: number }> = [];
  for (let kill = 1; kill <= KILLS; kill++) {
    const victim = new GatewayChild(`victim.${kill}`, { ...(await settings()), stateDir: victimDir });
    await victim.ready;
    const threads = await Promise.all(
      Array.from({ length: VICTIM_SENDS }, async (_, i) => {
        const sent = await victim.call<{ status: string; threadId: string }>({
          method: "discordSend",
          args: {
            fromAgentId: "ruda",
            targetAgentId: "eden",
            topicId: `victim-${kill}-${i}`,
            message: `takeover ${kill}.${i}`,
          },
        });
        if (sent.status !== "sent") throw new Error(`takeover round ${kill}: a send was rejected`);
        return sent.threadId;
      }),
    );
    const killedAt = Date.now();
    await victim.kill();
    const reminder = (p: { channelId: string; head: string }) =>
      threads.includes(p.channelId) && p.head.startsWith("[리마인더 1/");
    // The victim's own first reminders would time its own post, not a takeover (due 1 s after a send).
    if (victim.posts.some(reminder))
      throw new Error(`takeover round ${kill}: the victim posted a reminder before it was killed`);
    const reminders = () => survivors.flatMap((s) => s.posts).filter(reminder);
    const deadline = Date.now() + 10 * LEASE_MS;
    while (new Set(reminders().map((p) => p.channelId)).size < threads.length) {
      if (Date.now() > deadline)
        throw new Error(
          `takeover round ${kill}: ${reminders().length}/${threads.length} reminders after ${10 * LEASE_MS} ms`,
        );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const at = reminders().map((p) => p.at - killedAt);
    results.push({ first: Math.min(...at), last: Math.max(...at) });
  }
  await Promise.all(survivors.map((c) => c.stop()));
  return results;
}

async function main(): Promise<void> {
  const server = await startPostgres();
  try {
    const scenarios = [
      { label: "lowdb", processes: 1 },
      ...[1, 2, 4].map((processes) => ({ label: "postgres", processes })),
    ];
    const runs: LoadRun[][] = scenarios.map(() => []);
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round} of ${ROUNDS}`);
      for (const [i, { label, processes }] of scenarios.entries()) {
        const store: GatewaySettings["store"] =
          label === "lowdb"
            ? { kind: "lowdb" }
            : { kind: "postgres", connectionString: await server.createDatabase(), leaseMs: 10_000 };
        runs[i]?.push(await measureLoad(label, processes, store));
      }
    }
    const rows = scenarios.map(({ label, processes }, i) => {
      const mine = runs[i] ?? [];
      const rates = mine.map((r) => r.transitionsPerS);
      const lags = mine.flatMap((r) => r.lags);
      return {
        label,
        processes,
        transitionsPerS: quantile(rates, 0.5),
        range: `${int(Math.min(...rates))}–${int(Math.max(...rates))}`,
        sendsPerS: quantile(
          mine.map((r) => r.sendsPerS),
          0.5,
        ),
        lagP50: quantile(lags, 0.5),
        lagP99: quantile(lags, 0.99),
        lags: lags.length,
      };
    });
    const takeovers = await measureTakeover(await server.createDatabase());
    const base = rows[0] as (typeof rows)[number];
    printTable(
      `(a) ${LOAD_MS / 1000} s of closed-loop discordSend load, ${CONCURRENCY} in flight per process (same load per process), ${ROUNDS} rounds`,
      [
        "store",
        "processes",
        "transitions/s",
        "range",
        "× lowdb",
        "sends/s",
        "lag p50",
        "× lowdb",
        "lag p99",
        "× lowdb",
        "lag samples",
      ],
      rows.map((r) => [
        r.label,
        String(r.processes),
        int(r.transitionsPerS),
        r.range,
        times(r.transitionsPerS / base.transitionsPerS),
        int(r.sendsPerS),
        ms(r.lagP50),
        times(r.lagP50 / base.lagP50),
        ms(r.lagP99),
        times(r.lagP99 / base.lagP99),
        int(r.lags),
      ]),
    );
    const takeoverRow = (label: string, values: number[]) => {
      const p50 = quantile(values, 0.5);
      const p99 = quantile(values, 0.99);
      return [label, ms(p50), ms(p99), ms(Math.max(...values)), times(p50 / LEASE_MS), times(p99 / LEASE_MS)];
    };
    printTable(
      `(b) takeover after a SIGKILL: ${takeovers.length} kills, leaseMs ${LEASE_MS}, 2 surviving processes, ${VICTIM_SENDS} overdue reminders each`,
      ["from the kill to", "p50", "p99", "max", "p50 ÷ leaseMs", "p99 ÷ leaseMs"],
      [
        takeoverRow(
          "first reminder posted elsewhere",
          takeovers.map((t) => t.first),
        ),
        takeoverRow(
          "all reminders posted elsewhere",
          takeovers.map((t) => t.last),
        ),
      ],
    );
  } finally {
    await killAll();
    await server.close();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
