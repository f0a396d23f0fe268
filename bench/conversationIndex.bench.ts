// Issue benchmark (a): getConversationId through the ConversationIndex vs the full NDJSON scan it
// replaced, at 10k and 100k log lines, in one run (targets: ≥ 10× at 10k lines, ≥ 1,000× at 100k).
// Run: npx tsx bench/conversationIndex.bench.ts
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ConversationIndex } from "../src/runtime/ConversationIndex.js";
import { EVENT_LOG_FILE } from "../src/runtime/EventLog.js";
import { scanConversationId } from "../src/runtime/scanConversationId.js";
import { type A2AEvent, A2AEventSchema } from "../src/policies/index.js";
import { seededRandom } from "../test/support/seededRandom.js";

const SIZES = [10_000, 100_000] as const;
const TARGETS: Record<number, number> = { 10_000: 10, 100_000: 1_000 };
const REQUESTERS = 25;
const TARGET_AGENTS = 20; // 25 × 20 = 500 routes
const INDEX_LOOKUPS = 1_000_000;
const OPENS = 20;
const START = 1_767_225_600_000;
/** Only in the log's first conversation: the scan must parse every line to find it. */
const EARLY_ROUTE = "agent:early:main:agent:probe:main";
/** The log's last conversation: the scan finds it within a few lines, after reading the whole file. */
const LATE_ROUTE = "agent:late:main:agent:probe:main";

const INTENTS = ["question", "collaboration", "notification", "result_report"] as const;
const PHRASES = [
  "Can you review the deployment plan for the payments service?",
  "리뷰 결과를 정리해서 공유해 주세요. 특히 롤백 절차를 확인해야 합니다.",
  "The integration tests pass on staging; the flaky one is the webhook retry case.",
  "I checked the logs: the timeout comes from the upstream gateway, not from us.",
  "Summarise the thread and list the open questions for tomorrow's standup.",
];

/** One conversation: send, 1–4 responses (sometimes a retry first), complete, plus collaboration noise. */
function conversation(
  routeKey: string,
  conversationId: string,
  runId: string,
  ts: number,
  random: () => number,
): A2AEvent[] {
  const [requester = "main", target = "worker"] = routeKey.split(":agent:");
  const intent = INTENTS[Math.floor(random() * INTENTS.length)] ?? "question";
  const phrase = () => PHRASES[Math.floor(random() * PHRASES.length)] ?? "";
  const turns = 1 + Math.floor(random() * 4);
  const events: A2AEvent[] = [
    {
      type: "a2a.send",
      ts,
      routeKey,
      conversationId,
      runId,
      fromAgent: requester,
      toAgent: target,
      data: {
        targetSessionKey: `agent:${target}`,
        requesterSessionKey: requester,
        message: phrase(),
        messageIntent: intent,
        idempotencyKey: `${runId}-send`,
        mode: "sync",
      },
    },
  ];
  if (random() < 0.1) {
    events.push({
      type: "a2a.retry",
      ts: ts + 1,
      conversationId,
      runId,
      data: {
        errorCode: "gateway_timeout",
        errorCategory: "transient",
        errorMessage: "agent.wait timed out after 30000ms",
        attempt: 1,
        maxAttempts: 3,
        backoffMs: 2000,
        conversationId,
        fromAgent: requester,
        toAgent: target,
      },
    });
  }
  for (let turn = 0; turn < turns; turn += 1) {
    events.push({
      type: "a2a.response",
      ts: ts + 10 + turn,
      routeKey,
      conversationId,
      runId,
      data: {
        turn,
        speakerSessionKey: turn % 2 === 0 ? `agent:${target}` : requester,
        reply: phrase(),
        outcome: "ok",
        messageIntent: intent,
        effectiveTurns: turns,
      },
    });
  }
  if (random() < 0.2) {
    events.push({
      type: "a2a.collaborate.requested",
      ts: ts + 20,
      data: { fromAgentId: target, toAgentId: "reviewer", collaborationId: `collab-${runId}` },
    });
  }
  events.push({
    type: "a2a.complete",
    ts: ts + 30,
    routeKey,
    conversationId,
    runId,
    data: {
      retryAttempts: 0,
      messageIntent: intent,
      configuredMaxTurns: 5,
      effectiveTurns: turns,
      actualTurns: turns,
      earlyTermination: false,
      announced: true,
      announceSkipped: false,
      announceText: phrase(),
    },
  });
  return events;
}

interface BuiltLog {
  dir: string;
  file: string;
  bytes: number;
  expected: Map<string, string>;
}

async function buildLog(lines: number): Promise<BuiltLog> {
  const random = seededRandom(lines);
  const routes: string[] = [];
  for (let r = 0; r < REQUESTERS; r += 1) {
    for (let t = 0; t < TARGET_AGENTS; t += 1) routes.push(`agent:req${r}:main:agent:worker${t}:main`);
  }
  const expected = new Map<string, string>();
  const out: string[] = [];
  let ts = START;
  let n = 0;
  const add = (routeKey: string, budget: number) => {
    n += 1;
    const conversationId = `conv-${lines}-${n}`;
    const events = conversation(routeKey, conversationId, `run-${n}`, ts, random).slice(0, budget);
    ts += 1_000;
    for (const event of events) out.push(JSON.stringify(event));
    if (events.some((event) => event.routeKey === routeKey)) expected.set(routeKey, conversationId);
  };
  add(EARLY_ROUTE, lines);
  const tail = 8; // room for the late route's conversation
  while (out.length < lines - tail) {
    add(routes[Math.floor(random() * routes.length)] ?? EARLY_ROUTE, lines - tail - out.length);
  }
  add(LATE_ROUTE, lines - out.length);
  // Pad to the exact count with collaboration events, which carry no routeKey.
  while (out.length < lines) {
    const pad: A2AEvent = {
      type: "a2a.collaborate.sent",
      ts,
      data: { fromAgentId: "main", toAgentId: "reviewer", threadId: `thread-${out.length}` },
    };
    out.push(JSON.stringify(pad));
  }
  // A sample goes through the real schema, so the benchmark parses events the library would write.
  for (const line of out.slice(0, 200)) A2AEventSchema.parse(JSON.parse(line));

  const dir = await mkdtemp(join(tmpdir(), `a2a-bench-${lines}-`));
  const file = join(dir, EVENT_LOG_FILE);
  await writeFile(file, `${out.join("\n")}\n`);
  return { dir, file, bytes: (await stat(file)).size, expected };
}

function meanMicros(times: number, run: () => void): number {
  const started = performance.now();
  for (let i = 0; i < times; i += 1) run();
  return ((performance.now() - started) * 1000) / times;
}

async function meanMicrosAsync(times: number, run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < times; i += 1) await run();
  return ((performance.now() - started) * 1000) / times;
}

interface Row {
  lines: number;
  mb: string;
  route: string;
  indexUs: number;
  scanUs: number;
  ratio: number;
  coldUs: number;
}

async function measure(lines: number): Promise<{ rows: Row[]; openMs: number; rebuildMs: number }> {
  const log = await buildLog(lines);
  try {
    const rebuildStarted = performance.now();
    const built = await ConversationIndex.open({
      dir: log.dir,
      rebuildFromLog: true,
      onWarning: console.warn,
    });
    await built.close();
    const rebuildMs = performance.now() - rebuildStarted;

    // Cold load: what a restart costs before the first lookup (after a few warm-up opens for the JIT).
    let index = await ConversationIndex.open({ dir: log.dir });
    for (let i = 0; i < 5; i += 1) {
      await index.close();
      index = await ConversationIndex.open({ dir: log.dir });
    }
    await index.close();
    const openMs =
      (await meanMicrosAsync(OPENS, async () => {
        index = await ConversationIndex.open({ dir: log.dir });
        await index.close();
      })) / 1000;
    index = await ConversationIndex.open({ dir: log.dir });

    const rows: Row[] = [];
    for (const [label, route] of [
      ["near start", EARLY_ROUTE],
      ["near end", LATE_ROUTE],
    ] as const) {
      const want = log.expected.get(route);
      const viaScan = await scanConversationId(log.file, route);
      if (index.get(route) !== want || viaScan !== want) {
        throw new Error(
          `${lines} lines, ${route}: index ${index.get(route)}, scan ${viaScan}, expected ${want}`,
        );
      }
      let sink = 0;
      meanMicros(10_000, () => {
        sink += index.get(route)?.length ?? 0;
      }); // warm-up
      const indexUs = meanMicros(INDEX_LOOKUPS, () => {
        sink += index.get(route)?.length ?? 0;
      });
      await scanConversationId(log.file, route); // warm-up
      const scans = lines >= 100_000 ? 10 : 40;
      const scanUs = await meanMicrosAsync(scans, async () => {
        sink += (await scanConversationId(log.file, route))?.length ?? 0;
      });
      if (sink === 0) throw new Error("lookups returned nothing");
      rows.push({
        lines,
        mb: (log.bytes / 1024 / 1024).toFixed(1),
        route: label,
        indexUs,
        scanUs,
        ratio: scanUs / indexUs,
        coldUs: openMs * 1000 + indexUs,
      });
    }
    await index.close();
    return { rows, openMs, rebuildMs };
  } finally {
    await rm(log.dir, { recursive: true, force: true });
  }
}

const fmt = (value: number, digits = 2) =>
  value >= 1000 ? Math.round(value).toLocaleString("en-US") : value.toFixed(digits);

async function main(): Promise<void> {
  console.log(
    `ConversationIndex.get vs scanConversationId (design 003 baseline), ${REQUESTERS * TARGET_AGENTS} routes`,
  );
  console.log(
    `node ${process.version}; index: mean of ${INDEX_LOOKUPS.toLocaleString("en-US")} lookups after open\n`,
  );
  const header = [
    "lines",
    "log MB",
    "route",
    "index µs/lookup",
    "scan µs/lookup",
    "ratio",
    "open+get µs",
    "ratio vs open+get",
  ];
  const table: string[][] = [];
  const notes: string[] = [];
  let missed = false;
  for (const lines of SIZES) {
    const { rows, openMs, rebuildMs } = await measure(lines);
    notes.push(
      `${lines.toLocaleString("en-US")} lines: index cold open ${openMs.toFixed(2)} ms (mean of ${OPENS}), ` +
        `one-time rebuild from the log ${rebuildMs.toFixed(0)} ms`,
    );
    for (const row of rows) {
      const target = TARGETS[row.lines] ?? 0;
      if (row.ratio < target) missed = true;
      table.push([
        row.lines.toLocaleString("en-US"),
        row.mb,
        row.route,
        fmt(row.indexUs, 3),
        fmt(row.scanUs),
        `${fmt(row.ratio, 0)}×`,
        fmt(row.coldUs),
        `${fmt(row.scanUs / row.coldUs, 1)}×`,
      ]);
    }
  }
  const widths = header.map((title, i) =>
    Math.max(title.length, ...table.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of table) console.log(line(row));
  console.log();
  for (const note of notes) console.log(note);
  console.log(
    `targets: ratio ≥ 10× at 10k lines (design 003 §7.3), ≥ 1,000× at 100k lines: ${missed ? "MISSED" : "met"}`,
  );
  if (missed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
