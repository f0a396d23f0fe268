// Issue 6 item 5: the turn-savings report (target: ≥ 50% fewer LLM calls on average). Plays the
// scripted conversations of bench/turnSavings/scripts.ts (all five intents) through the real
// a2aFlowMachine in one run, with the optimisation (intent-based turns, early termination, announce
// decision; default config) and with two old behaviours: the issue's "fixed 5 turns, always announce"
// (7 calls a conversation, whatever it says) and the old code's loop (5 turns, none with a skip tag,
// stopped by REPLY_SKIP, always announce). Counts the LLM calls of each and prints them per intent, the totals,
// the ratio and whether the target is met against each baseline.
// Run: npx tsx bench/turnSavings.bench.ts [--scripts]   (--scripts adds one row per conversation)
import { performance } from "node:perf_hooks";
import { A2AMessageIntent, classifyMessageIntent } from "../src/policies/index.js";
import {
  type Calls,
  FIXED_FILL,
  FIXED_TURNS,
  type FlowRun,
  fixedLoopCalls,
  OLD_CONFIG,
  OLD_MAX_TURNS,
  OLD_SKIP_TAGS,
  OPTIMISED_CONFIG,
  oldLoopCalls,
  runScript,
} from "./turnSavings/flows.js";
import { SCRIPTS, type Script } from "./turnSavings/scripts.js";

const TARGET_SAVINGS = 0.5; // the target: 50% fewer LLM calls on average
const MIN_SCRIPTS = 40;
const INTENTS = Object.values(A2AMessageIntent);

interface Result {
  script: Script;
  /** The issue's old behaviour: fixed 5 turns, always announce. */
  fixed5: FlowRun;
  /** The old code's loop: 5 turns (0 with a skip tag), stopped by REPLY_SKIP, always announce. */
  oldLoop: FlowRun;
  optimised: FlowRun;
  /** The optimised flow with every conversation given a Discord announce target. */
  allAnnounced: FlowRun;
}

type Side = Exclude<keyof Result, "script">;
type Baseline = "fixed5" | "oldLoop";

/** The two old behaviours, by the names the report gives them. */
const BASELINES: Array<{ side: Baseline; name: string; short: string }> = [
  { side: "fixed5", name: "fixed 5 turns + always announce", short: "fixed 5" },
  { side: "oldLoop", name: "design 001 §1.2's old loop", short: "old loop" },
];

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
    const fixed5 = await runScript(script, "fixed5");
    const oldLoop = await runScript(script, "oldLoop");
    const optimised = await runScript(script, "optimised");
    const allAnnounced = await runScript(script, "optimised", { announce: "discord" });

    // The fixed run through the machines must be the plain count: 1 + 5 + 1, every step run.
    const expectedFixed = fixedLoopCalls();
    check(
      sameCalls(fixed5.calls, expectedFixed),
      `${script.id}: fixed flow made ${JSON.stringify(fixed5.calls)}, fixed 5 turns + always announce ` +
        `counts ${JSON.stringify(expectedFixed)}`,
    );
    check(
      fixed5.output.actualTurns === FIXED_TURNS && fixed5.output.terminationReason === "max_turns",
      `${script.id}: the fixed ping-pong ended ${fixed5.output.terminationReason} after ` +
        `${fixed5.output.actualTurns} turns, not max_turns after ${FIXED_TURNS}`,
    );
    check(
      fixed5.filled === Math.max(0, FIXED_TURNS - script.turns.length),
      `${script.id}: ${fixed5.filled} filler replies for a script with ${script.turns.length} turns`,
    );
    check(
      oldLoop.filled + optimised.filled + allAnnounced.filled === 0,
      `${script.id}: a run other than fixed 5 was given a filler reply`,
    );
    // The old-loop run through the machines must match the old loop's arithmetic, announce included.
    const expectedOld = oldLoopCalls(script);
    check(
      sameCalls(oldLoop.calls, expectedOld),
      `${script.id}: old-loop flow made ${JSON.stringify(oldLoop.calls)}, the old loop counts ` +
        `${JSON.stringify(expectedOld)}`,
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
    results.push({ script, fixed5, oldLoop, optimised, allAnnounced });
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

/** Calls summed over some results, for one side; all of a run's calls unless `pick` says which. */
function callsOf(of: Result[], side: Side, pick: (run: FlowRun) => number = (run) => run.total): number {
  return of.reduce((acc, r) => acc + pick(r[side]), 0);
}

async function main(): Promise<void> {
  const started = performance.now();
  validateScripts();
  const results = await runAll();
  const ms = performance.now() - started;
  const n = results.length;

  const optTotal = callsOf(results, "optimised");
  const totals = { fixed5: callsOf(results, "fixed5"), oldLoop: callsOf(results, "oldLoop") };
  // The machines' fixed run must agree with the plain count: 7 calls for every conversation.
  const perFixed = fixedLoopCalls();
  const fixedPerConversation = perFixed.initial + perFixed.turns + perFixed.announce;
  const plainFixed = fixedPerConversation * n;
  check(
    totals.fixed5 === plainFixed,
    `fixed 5 turns + always announce: the flows made ${totals.fixed5} calls, ` +
      `${fixedPerConversation} × ${n} is ${plainFixed}`,
  );
  const a2a = OPTIMISED_CONFIG.session.agentToAgent;
  const oldA2a = OLD_CONFIG.session.agentToAgent;
  const fixedSteps = callsOf(results, "fixed5", (run) => run.calls.turns);
  const filledSteps = callsOf(results, "fixed5", (run) => run.filled);

  console.log(
    `turn savings (design 001 §3): ${n} scripted conversations through a2aFlowMachine, ` +
      `${(ms / 1000).toFixed(2)} s (${n * 4} flows: fixed 5, old loop, optimised, optimised all announced)`,
  );
  console.log(
    `optimised: parseConfig defaults (maxPingPongTurns ${a2a.maxPingPongTurns}, autoTerminate ` +
      `${String(a2a.autoTerminate)}), intent-based turns, announce only with an external channel`,
  );
  console.log(
    `two old behaviours, both with maxPingPongTurns ${oldA2a.maxPingPongTurns}, autoTerminate ` +
      `${String(oldA2a.autoTerminate)} and a Discord target on every conversation (always announce):`,
  );
  console.log(
    `  fixed 5 = fixed 5 turns + always announce (the issue's definition): ${FIXED_TURNS} ping-pong steps ` +
      `for every message, no tag skip, REPLY_SKIP and empty replies do not stop it; a turn the script has ` +
      `no reply for answers ${FIXED_FILL} (${filledSteps} of ${fixedSteps} steps)`,
  );
  console.log(
    `  old loop = design 001 §1.2's old loop: ${OLD_MAX_TURNS} turns for every message ` +
      `(0 with ${OLD_SKIP_TAGS.source}), stops only on REPLY_SKIP or an empty reply`,
  );
  console.log("LLM calls: 1 per agent run (the message, each ping-pong step, the announce step)\n");

  const ofIntent = (intent: A2AMessageIntent) => results.filter((r) => r.script.intent === intent);
  const groups: Array<[string, Result[]]> = [
    ...INTENTS.map((intent): [string, Result[]] => [intent, ofIntent(intent)]),
    ["total", results],
  ];
  console.log("LLM calls per intent:\n");
  console.log(
    table(
      [
        "intent",
        "conversations",
        "fixed 5",
        "old loop",
        "optimised",
        "saved vs fixed 5",
        "saved vs old loop",
      ],
      groups.map(([name, of]) => {
        const opt = callsOf(of, "optimised");
        const olds = BASELINES.map((b) => callsOf(of, b.side));
        return [name, fmt(of.length), ...olds.map(fmt), fmt(opt), ...olds.map((old) => savedPct(old, opt))];
      }),
    ),
  );
  const perConversation = (calls: number, count: number) => (calls / count).toFixed(2);
  console.log("\nLLM calls per conversation:\n");
  console.log(
    table(
      ["intent", "fixed 5", "old loop", "optimised"],
      groups.map(([name, of]) => [
        name,
        ...(["fixed5", "oldLoop", "optimised"] as const).map((side) =>
          perConversation(callsOf(of, side), of.length),
        ),
      ]),
    ),
  );

  const kinds: Array<[string, (c: Calls) => number]> = [
    ["initial request", (c) => c.initial],
    ["ping-pong steps", (c) => c.turns],
    ["announce step", (c) => c.announce],
  ];
  console.log("\nwhere the calls go:\n");
  console.log(
    table(
      ["LLM call", "fixed 5", "old loop", "optimised", "saved vs fixed 5", "saved vs old loop"],
      kinds.map(([name, pick]) => {
        const opt = callsOf(results, "optimised", (run) => pick(run.calls));
        const olds = BASELINES.map((b) => callsOf(results, b.side, (run) => pick(run.calls)));
        return [name, ...olds.map(fmt), fmt(opt), ...olds.map((old) => fmt(old - opt))];
      }),
    ),
  );

  const reasons = new Map<string, number>();
  for (const r of results) {
    const reason = r.optimised.output.terminationReason ?? "none";
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const oldTagged = results.filter((r) => r.oldLoop.calls.turns === 0);
  const oldEarly = results.filter(
    (r) => r.oldLoop.calls.turns > 0 && r.oldLoop.calls.turns < OLD_MAX_TURNS,
  ).length;
  const beyond = (of: Result[]) =>
    of.reduce((acc, r) => acc + r.fixed5.calls.turns - r.oldLoop.calls.turns, 0);
  const beyondTagged = beyond(oldTagged);
  const beyondSkip = beyond(results) - beyondTagged;
  console.log(
    `\nhow the optimised ping-pongs ended: ${[...reasons].map(([reason, k]) => `${reason} ${k}`).join(", ")}`,
  );
  console.log(
    `how the fixed 5 ping-pongs ended: ${FIXED_TURNS} turns ${n} (${fixedSteps} steps, ` +
      `${beyondTagged + beyondSkip} more than the old loop: ${beyondTagged} on the ${oldTagged.length} ` +
      `skip-tagged messages, ${beyondSkip} after a REPLY_SKIP)`,
  );
  console.log(
    `how the old-loop ping-pongs ended: ${OLD_MAX_TURNS} turns ${n - oldEarly - oldTagged.length}, ` +
      `REPLY_SKIP before turn ${OLD_MAX_TURNS} ${oldEarly}, skip tag ${oldTagged.length}`,
  );
  console.log(
    `announcements posted: fixed 5 ${callsOf(results, "fixed5", (run) => run.posts)} of ${n} announce ` +
      `calls, old loop ${callsOf(results, "oldLoop", (run) => run.posts)} of ${n}, optimised ` +
      `${callsOf(results, "optimised", (run) => run.posts)} of ` +
      `${callsOf(results, "optimised", (run) => run.calls.announce)}`,
  );

  const allTotal = callsOf(results, "allAnnounced");
  const untagged = results.filter(
    (r) =>
      r.script.intent !== A2AMessageIntent.NOTIFICATION && r.script.intent !== A2AMessageIntent.ESCALATION,
  );
  const untaggedOpt = callsOf(untagged, "optimised");
  // Each intent weighted equally: the mean over intents of the calls per conversation.
  const meanOverIntents = (side: Side) =>
    INTENTS.reduce((acc, intent) => {
      const of = ofIntent(intent);
      return acc + callsOf(of, side) / of.length;
    }, 0) / INTENTS.length;
  const equalOpt = meanOverIntents("optimised");
  const both = (describe: (b: (typeof BASELINES)[number]) => string) => BASELINES.map(describe).join(", ");
  console.log("\nsensitivity:");
  console.log(
    `  every conversation with a Discord announce target: ${fmt(allTotal)} calls, ` +
      both((b) => `${savedPct(totals[b.side], allTotal)} fewer than ${b.short}`),
  );
  console.log(
    `  untagged messages only (question, collaboration, result_report; ${untagged.length} conversations): ` +
      both((b) => {
        const old = callsOf(untagged, b.side);
        return `${b.short} ${fmt(old)} → ${fmt(untaggedOpt)}, ${savedPct(old, untaggedOpt)} fewer`;
      }),
  );
  console.log(
    `  each intent weighted equally (${INTENTS.length} × ${100 / INTENTS.length}%), calls per conversation: ` +
      both((b) => {
        const old = meanOverIntents(b.side);
        return `${b.short} ${old.toFixed(2)} → ${equalOpt.toFixed(2)}, ${savedPct(old, equalOpt)} fewer`;
      }),
  );

  if (process.argv.includes("--scripts")) {
    const cost = (run: FlowRun) =>
      `${run.total} (${run.calls.initial}+${run.calls.turns}+${run.calls.announce})`;
    console.log("\nper conversation (calls: initial + steps + announce):\n");
    console.log(
      table(
        ["script", "intent", "fixed 5", "old loop", "optimised", "optimised end", "announce target"],
        results.map((r) => [
          r.script.id,
          r.script.intent,
          cost(r.fixed5),
          cost(r.oldLoop),
          cost(r.optimised),
          r.optimised.output.terminationReason ?? "none",
          r.script.announce,
        ]),
      ),
    );
  }

  console.log("");
  for (const b of BASELINES) {
    const plain =
      b.side === "fixed5" ? ` (= ${fixedPerConversation} × ${n} conversations, the plain count)` : "";
    console.log(
      `${b.name}: ${fmt(totals[b.side])} calls${plain}, optimised ${fmt(optTotal)} calls: ` +
        `ratio optimised/old ${(optTotal / totals[b.side]).toFixed(3)}`,
    );
  }
  for (const b of BASELINES) {
    const savings = (totals[b.side] - optTotal) / totals[b.side];
    console.log(
      `turn savings vs ${b.name}: ${(savings * 100).toFixed(1)}% fewer LLM calls ` +
        `(target ≥ ${TARGET_SAVINGS * 100}%): ${savings >= TARGET_SAVINGS ? "met" : "missed"}`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
