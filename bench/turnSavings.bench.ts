// Design 001 §3 / issue 6 item 5: the turn-savings report. Plays the scripted conversations of
// bench/turnSavings/scripts.ts (all five intents) through the real a2aFlowMachine twice in one run,
// with the optimisation (intent-based turns, early termination, announce decision; default config)
// and with the old behaviour (5 turns, no system early termination, always announce), counts the LLM
// calls of each and prints them per intent, the totals, the ratio and whether the target is met.
// Run: npx tsx bench/turnSavings.bench.ts [--scripts]   (--scripts adds one row per conversation)
import { performance } from "node:perf_hooks";
import { A2AMessageIntent, classifyMessageIntent } from "../src/services/index.js";
import {
  type Calls,
  type FlowRun,
  OLD_CONFIG,
  OLD_MAX_TURNS,
  OLD_SKIP_TAGS,
  OPTIMISED_CONFIG,
  oldLoopCalls,
  runScript,
} from "./turnSavings/flows.js";
import { SCRIPTS, type Script } from "./turnSavings/scripts.js";

const TARGET_SAVINGS = 0.5; // design 001 §3: 평균 LLM 호출 50% 이상 감소
const MIN_SCRIPTS = 40;
const INTENTS = Object.values(A2AMessageIntent);

interface Result {
  script: Script;
  old: FlowRun;
  optimised: FlowRun;
  /** The optimised flow with every conversation given a Discord announce target. */
  allAnnounced: FlowRun;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

function sameCalls(a: Calls, b: Calls): boolean {
  return a.initial === b.initial && a.turns === b.turns && a.announce === b.announce;
}

/** The scripts must be what they say they are before anything is counted. */
function validateScripts(): void {
  check(SCRIPTS.length >= MIN_SCRIPTS, `only ${SCRIPTS.length} scripts, need ≥ ${MIN_SCRIPTS}`);
  const ids = new Set<string>();
  for (const s of SCRIPTS) {
    check(!ids.has(s.id), `duplicate script id ${s.id}`);
    ids.add(s.id);
    check(s.from !== s.to, `${s.id}: requester and target are the same agent`);
    const classified = classifyMessageIntent(s.message).intent;
    check(
      classified === s.intent,
      `${s.id}: the message classifies as ${classified}, the script says ${s.intent}: ${JSON.stringify(s.message)}`,
    );
  }
  for (const intent of INTENTS) {
    check(
      SCRIPTS.some((s) => s.intent === intent),
      `no script classifies as ${intent}`,
    );
  }
}

async function runAll(): Promise<Result[]> {
  const results: Result[] = [];
  for (const script of SCRIPTS) {
    const old = await runScript(script, "old");
    const optimised = await runScript(script, "optimised");
    const allAnnounced = await runScript(script, "optimised", { announce: "discord" });

    // The old run through the machines must match the old loop's arithmetic, announce included.
    const expectedOld = oldLoopCalls(script);
    check(
      sameCalls(old.calls, expectedOld),
      `${script.id}: old flow made ${JSON.stringify(old.calls)}, the old loop counts ${JSON.stringify(expectedOld)}`,
    );
    // The optimised run: one initial call, the ping-pong ends where the script says, the announce
    // runs exactly when the script has an external channel.
    const { output, calls } = optimised;
    check(calls.initial === 1, `${script.id}: ${calls.initial} initial calls`);
    check(
      calls.turns === output.actualTurns,
      `${script.id}: ${calls.turns} steps, actualTurns ${output.actualTurns}`,
    );
    check(
      output.terminationReason === script.expect.reason && calls.turns === script.expect.turns,
      `${script.id}: the optimised ping-pong ended ${output.terminationReason} after ${calls.turns} turns, ` +
        `the script expects ${script.expect.reason} after ${script.expect.turns}`,
    );
    check(
      calls.announce === (script.announce === "discord" ? 1 : 0),
      `${script.id}: ${calls.announce} announce calls with a ${script.announce} target`,
    );
    check(allAnnounced.calls.announce === 1, `${script.id}: the all-announced run did not announce`);
    results.push({ script, old, optimised, allAnnounced });
  }
  return results;
}

const fmt = (n: number) => n.toLocaleString("en-US");
const pct = (part: number, whole: number) => (whole === 0 ? "–" : `${((part / whole) * 100).toFixed(1)}%`);
const savedPct = (old: number, opt: number) => pct(old - opt, old);

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  return [line(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

type Side = "old" | "optimised" | "allAnnounced";

/** Calls summed over some results, for one side; all of a run's calls unless `pick` says which. */
function callsOf(of: Result[], side: Side, pick: (run: FlowRun) => number = (run) => run.total): number {
  return of.reduce((acc, r) => acc + pick(r[side]), 0);
}

async function main(): Promise<void> {
  const started = performance.now();
  validateScripts();
  const results = await runAll();
  const ms = performance.now() - started;

  const oldTotal = callsOf(results, "old");
  const optTotal = callsOf(results, "optimised");
  const savings = (oldTotal - optTotal) / oldTotal;
  const a2a = OPTIMISED_CONFIG.session.agentToAgent;
  const oldA2a = OLD_CONFIG.session.agentToAgent;

  console.log(
    `turn savings (design 001 §3): ${results.length} scripted conversations through a2aFlowMachine, ` +
      `${(ms / 1000).toFixed(2)} s`,
  );
  console.log(
    `optimised: parseConfig defaults (maxPingPongTurns ${a2a.maxPingPongTurns}, autoTerminate ` +
      `${String(a2a.autoTerminate)}), intent-based turns, announce only with an external channel`,
  );
  console.log(
    `old: maxPingPongTurns ${oldA2a.maxPingPongTurns}, autoTerminate ${String(oldA2a.autoTerminate)}, ` +
      `${OLD_MAX_TURNS} turns for every message (0 with ${OLD_SKIP_TAGS.source}), stops only on REPLY_SKIP ` +
      `or an empty reply, always announces`,
  );
  console.log("LLM calls: 1 per agent run (the message, each ping-pong step, the announce step)\n");

  const perConversation = (calls: number, n: number) => (calls / n).toFixed(2);
  const rows = INTENTS.map((intent) => {
    const of = results.filter((r) => r.script.intent === intent);
    const old = callsOf(of, "old");
    const opt = callsOf(of, "optimised");
    return [
      intent,
      fmt(of.length),
      fmt(old),
      fmt(opt),
      savedPct(old, opt),
      perConversation(old, of.length),
      perConversation(opt, of.length),
    ];
  });
  rows.push([
    "total",
    fmt(results.length),
    fmt(oldTotal),
    fmt(optTotal),
    savedPct(oldTotal, optTotal),
    perConversation(oldTotal, results.length),
    perConversation(optTotal, results.length),
  ]);
  const headers = ["intent", "conversations", "old calls", "optimised calls", "saved"];
  console.log(table([...headers, "old calls/conv", "optimised calls/conv"], rows));

  const kinds: Array<[string, (c: Calls) => number]> = [
    ["initial request", (c) => c.initial],
    ["ping-pong steps", (c) => c.turns],
    ["announce step", (c) => c.announce],
  ];
  console.log("\nwhere the calls go:\n");
  console.log(
    table(
      ["LLM call", "old", "optimised", "saved"],
      kinds.map(([name, pick]) => {
        const old = callsOf(results, "old", (run) => pick(run.calls));
        const opt = callsOf(results, "optimised", (run) => pick(run.calls));
        return [name, fmt(old), fmt(opt), fmt(old - opt)];
      }),
    ),
  );

  const reasons = new Map<string, number>();
  for (const r of results) {
    const reason = r.optimised.output.terminationReason ?? "none";
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const oldTagged = results.filter((r) => r.old.calls.turns === 0).length;
  const oldEarly = results.filter((r) => r.old.calls.turns > 0 && r.old.calls.turns < OLD_MAX_TURNS).length;
  console.log(
    `\nhow the optimised ping-pongs ended: ${[...reasons].map(([reason, n]) => `${reason} ${n}`).join(", ")}`,
  );
  console.log(
    `how the old ping-pongs ended: ${OLD_MAX_TURNS} turns ${results.length - oldEarly - oldTagged}, ` +
      `REPLY_SKIP before turn ${OLD_MAX_TURNS} ${oldEarly}, skip tag ${oldTagged}`,
  );
  console.log(
    `announcements posted: old ${callsOf(results, "old", (run) => run.posts)} of ${results.length} announce ` +
      `calls, optimised ${callsOf(results, "optimised", (run) => run.posts)} of ` +
      `${callsOf(results, "optimised", (run) => run.calls.announce)}`,
  );

  const allTotal = callsOf(results, "allAnnounced");
  const untagged = results.filter(
    (r) =>
      r.script.intent !== A2AMessageIntent.NOTIFICATION && r.script.intent !== A2AMessageIntent.ESCALATION,
  );
  const untaggedOld = callsOf(untagged, "old");
  const untaggedOpt = callsOf(untagged, "optimised");
  // Each intent weighted equally: the mean over intents of the calls per conversation.
  const meanOverIntents = (side: Side) =>
    INTENTS.reduce((acc, intent) => {
      const of = results.filter((r) => r.script.intent === intent);
      return acc + callsOf(of, side) / of.length;
    }, 0) / INTENTS.length;
  const equalOld = meanOverIntents("old");
  const equalOpt = meanOverIntents("optimised");
  console.log("\nsensitivity:");
  console.log(
    `  every conversation with a Discord announce target: ${fmt(allTotal)} calls, ` +
      `${savedPct(oldTotal, allTotal)} fewer than old`,
  );
  console.log(
    `  untagged messages only (question, collaboration, result_report; ${untagged.length} conversations): ` +
      `${fmt(untaggedOld)} → ${fmt(untaggedOpt)}, ${savedPct(untaggedOld, untaggedOpt)} fewer`,
  );
  console.log(
    `  each intent weighted equally (${INTENTS.length} × ${100 / INTENTS.length}%): ${equalOld.toFixed(2)} → ` +
      `${equalOpt.toFixed(2)} calls per conversation, ${savedPct(equalOld, equalOpt)} fewer`,
  );

  if (process.argv.includes("--scripts")) {
    const cost = (run: FlowRun) =>
      `${run.total} (${run.calls.initial}+${run.calls.turns}+${run.calls.announce})`;
    console.log("\nper conversation (calls: initial + steps + announce):\n");
    console.log(
      table(
        ["script", "intent", "old", "optimised", "optimised end", "announce target"],
        results.map((r) => [
          r.script.id,
          r.script.intent,
          cost(r.old),
          cost(r.optimised),
          r.optimised.output.terminationReason ?? "none",
          r.script.announce,
        ]),
      ),
    );
  }

  console.log(
    `\nold ${fmt(oldTotal)} calls, optimised ${fmt(optTotal)} calls: ratio optimised/old ` +
      `${(optTotal / oldTotal).toFixed(3)}`,
  );
  console.log(
    `turn savings: ${(savings * 100).toFixed(1)}% fewer LLM calls (target ≥ ${TARGET_SAVINGS * 100}%): ` +
      `${savings >= TARGET_SAVINGS ? "met" : "missed"}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
