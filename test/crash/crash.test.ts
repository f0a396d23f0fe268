// Crash tests with real processes: a child (child.ts) runs the runtime on a real state directory and
// a Discord that survives it (durableDiscord.ts); this file SIGKILLs it at random moments, restarts
// it and checks the state after every kill. Randomness is only in the kill timing (seeded, printed:
// CRASH_SEED=<n> repeats the timings); what is asserted does not depend on it.
import { type ChildProcess, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { ActorRecord } from "../../src/persistence/index.js";
import { discordNonce } from "../../src/runtime/index.js";
import {
  BOTS,
  CHANNEL,
  type DiskRecord,
  isSent,
  MAX_ATTEMPTS,
  parseStoredLine,
  readActorRecords,
} from "./child.js";
import { type DeliveredMessage, readDiscordLog } from "./durableDiscord.js";
import { seededRandom } from "../support/seededRandom.js";
import { shardFileText } from "../support/shardFiles.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KILLS = Number(process.env.CRASH_KILLS ?? 50);
/** Share of kills aimed into start-up (lock take-over, store open, resume, overdue reminders). */
const EARLY_KILL_SHARE = 0.2;

// ---- the child process ----

interface ChildLine {
  loaded?: number;
  starting?: number;
  ready?: number;
  ack?: string;
  threadId?: string;
  answered?: string;
  outcome?: string;
  rejected?: unknown;
  stopped?: number;
  nonceHits?: number;
  durableMs?: number;
  onDiskAtResolve?: boolean;
}

const live = new Set<ChildProcess>();
afterAll(() => {
  // Only the children this file spawned, by their own handle.
  for (const proc of live) proc.kill("SIGKILL");
});

class Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly lines: ChildLine[] = [];
  readonly warnings: string[] = [];
  /** stderr that is not a runtime warning: a crash of the child's own. */
  readonly errors: string[] = [];
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exited = false;
  private readonly listeners = new Set<() => void>();

  constructor(stateDir: string, discordFile: string, seed: number) {
    this.proc = spawn(
      process.execPath,
      ["--import", "tsx", "test/crash/child.ts", stateDir, discordFile, String(seed)],
      { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
    );
    if (this.proc.pid === undefined) throw new Error("could not spawn the crash-test child");
    this.pid = this.proc.pid;
    live.add(this.proc);
    this.proc.stdin?.on("error", () => undefined); // EPIPE once the child is gone
    const out = createInterface({ input: this.proc.stdout as NodeJS.ReadableStream });
    const err = createInterface({ input: this.proc.stderr as NodeJS.ReadableStream });
    const outDone = new Promise((resolve) => out.once("close", resolve));
    const errDone = new Promise((resolve) => err.once("close", resolve));
    out.on("line", (line) => {
      try {
        this.lines.push(JSON.parse(line) as ChildLine);
      } catch {
        this.errors.push(`stdout: ${line}`);
      }
      this.notify();
    });
    err.on("line", (line) => {
      let warning: string | undefined;
      try {
        warning = (JSON.parse(line) as { warning?: string }).warning;
      } catch {
        // not a warning line
      }
      if (typeof warning === "string") this.warnings.push(warning);
      else this.errors.push(line);
    });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      this.proc.once("exit", (code, signal) => resolve({ code, signal })),
    );
    // Every line the child wrote is read before `closed` resolves.
    this.closed = Promise.all([exit, outDone, errDone]).then(([status]) => {
      this.exited = true;
      live.delete(this.proc);
      this.notify();
      return status;
    });
  }

  go(mode: "load" | "idle"): void {
    this.proc.stdin?.write(`${JSON.stringify({ go: mode })}\n`);
  }

  waitFor(what: string, test: (line: ChildLine) => boolean, timeoutMs = 30_000): Promise<ChildLine> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`child ${this.pid}: no ${what} within ${timeoutMs} ms: ${this.describe()}`)),
        timeoutMs,
      );
      timer.unref();
      const check = () => {
        const line = this.lines.find(test);
        if (line !== undefined) finish(undefined, line);
        else if (this.exited)
          finish(new Error(`child ${this.pid} exited before ${what}: ${this.describe()}`));
      };
      const finish = (error?: Error, line?: ChildLine) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error !== undefined) reject(error);
        else resolve(line as ChildLine);
      };
      this.listeners.add(check);
      check();
    });
  }

  has(test: (line: ChildLine) => boolean): boolean {
    return this.lines.some(test);
  }

  describe(): string {
    return [...this.errors, ...this.warnings.map((w) => `warning: ${w}`)].join("\n").slice(0, 4_000);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

// ---- reading what the child left behind ----

function walk(dir: string): string[] {
  // A child killed in the first milliseconds of its first start may not have made the state dir yet.
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** (a) Every state file: the .json ones must parse; quarantined and temporary files are listed. */
function scanStateFiles(stateDir: string) {
  const unparsable: string[] = [];
  const quarantined: string[] = [];
  const temporary: string[] = [];
  let json = 0;
  let tornLogLines = 0;
  for (const file of walk(stateDir)) {
    if (/\.corrupt-/.test(file) || file.includes(`${join(stateDir, "quarantine")}`)) quarantined.push(file);
    else if (/\.tmp(-\d+)?$/.test(file)) temporary.push(file);
    else if (file.endsWith(".json")) {
      json += 1;
      try {
        JSON.parse(readFileSync(file, "utf8"));
      } catch (error) {
        unparsable.push(`${file}: ${String(error)}`);
      }
    } else if (/\.ndjson(\.\d+)?$/.test(file)) {
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (line === "") continue;
        try {
          parseStoredLine(line);
        } catch {
          tornLogLines += 1;
        }
      }
    }
  }
  return { json, unparsable, quarantined, temporary, tornLogLines };
}

type LockState = { kind: "missing" } | { kind: "unreadable" } | { kind: "held"; pid: number };

function readLock(stateDir: string): LockState {
  let text: string;
  try {
    text = readFileSync(join(stateDir, ".lock"), "utf8");
  } catch {
    return { kind: "missing" };
  }
  // Empty: released at a clean stop, or the file was created and its holder killed before naming itself.
  if (text === "") return { kind: "missing" };
  try {
    const pid = (JSON.parse(text) as { pid?: unknown }).pid;
    return typeof pid === "number" ? { kind: "held", pid } : { kind: "unreadable" };
  } catch {
    return { kind: "unreadable" };
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** How far a collaboration got: 0 not sent, 1–3 deliveries of its mention, 100 finished. */
function rankOf(r: DiskRecord): number {
  if (r.status !== "active") return 100;
  return isSent(r) ? (r.meta?.mention?.attempts ?? 1) : 0;
}

const REMINDER = /^\[리마인더 (\d+)\/\d+\] <@\d+>.*\n원본: "(.*)" \(\d+분 전\)$/;
const ESCALATION = /^⚠️ 응답 없음 \(\d+회 시도, \d+분 경과\)\n대상: <@\d+>\n요청: "(.*)"\n/;
const MENTION = new RegExp(`^<@${BOTS.eden}> (.*)$`);

/**
 * Discord's messages by the request they are about — every child message is unique (`작업 <topic> …`)
 * and reminders and the escalation quote it — so posts are attributed to their collaboration whatever
 * thread they landed in. `posts` are "R1", "R2", "E" in delivery order.
 */
function byRequest(messages: DeliveredMessage[]) {
  const requests = new Map<string, { mentions: DeliveredMessage[]; posts: string[]; threads: Set<string> }>();
  const of = (text: string) => {
    const known = requests.get(text) ?? { mentions: [], posts: [], threads: new Set<string>() };
    requests.set(text, known);
    return known;
  };
  for (const m of messages) {
    const reminder = REMINDER.exec(m.content);
    const escalation = ESCALATION.exec(m.content);
    const mention = MENTION.exec(m.content);
    if (mention !== null) of(mention[1] as string).mentions.push(m);
    const post = reminder !== null ? `R${reminder[1]}` : escalation !== null ? "E" : undefined;
    const text = reminder?.[2] ?? escalation?.[1];
    if (post === undefined || text === undefined) continue;
    of(text).posts.push(post);
    of(text).threads.add(m.channelId);
  }
  return requests;
}

const FULL_SEQUENCE = [...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => `R${i + 1}`), "E"];

// ---- the crash run ----

interface Known {
  threadId: string;
  round: number;
}

describe("crash: SIGKILL at random moments, restart, check", () => {
  it(`survives ${KILLS} kills: files parse, acknowledged actors persist and never go back, no reminder twice`, async () => {
    const started = performance.now();
    const random = seededRandom(SEED);
    console.log(`crash test: seed ${SEED} (CRASH_SEED=${SEED} repeats the kill timings), ${KILLS} kills`);
    const dir = mkdtempSync(join(tmpdir(), "a2a-crash-"));
    const stateDir = join(dir, "state");
    const discordFile = join(dir, "discord.ndjson");

    const acked = new Map<string, Known>();
    const answered = new Map<string, string>();
    const seen = new Map<string, { rank: number; outcome?: string; round: number }>();
    const killed = new Set<number>();
    const unexpectedWarnings: string[] = [];
    const rejected: unknown[] = [];
    const durableMs: number[] = [];
    /** Acked sends whose record was not yet on disk when discordSend resolved. */
    const notOnDiskAtResolve: string[] = [];
    const stats = {
      earlyKills: 0,
      killsBeforeReady: 0,
      lockTakeovers: 0,
      tornDiscordTails: 0,
      tornLogLines: 0,
    };
    const failures: string[] = [];
    /** Collaborations whose mention went to one thread and whose reminders go to another. */
    const misplaced = new Map<string, string>();
    const fail = (round: number, message: string) => failures.push(`round ${round}: ${message}`);

    /** (b) and (c) on the files as they are now; returns the records for the final check. */
    const checkState = (round: number) => {
      const files = scanStateFiles(stateDir);
      for (const problem of files.unparsable) fail(round, `(a) a state file does not parse: ${problem}`);
      for (const file of files.quarantined)
        fail(round, `(a) a SIGKILL left a file the runtime quarantined: ${file}`);
      stats.tornLogLines = files.tornLogLines;

      const records = readActorRecords(stateDir);
      for (const [id, known] of acked) {
        const r = records.get(id);
        if (r === undefined) fail(round, `(b) acknowledged ${id} (round ${known.round}) is missing`);
        else if (r.meta?.threadId !== known.threadId) {
          fail(
            round,
            `(b) ${id}: thread ${String(r.meta?.threadId)} on disk, ${known.threadId} acknowledged`,
          );
        }
      }
      for (const [id, outcome] of answered) {
        const r = records.get(id);
        if (r?.status !== "done" || r.snapshot.value !== outcome) {
          fail(
            round,
            `(b) answered ${id} ended ${outcome} but is ${r?.status}/${String(r?.snapshot.value)} now`,
          );
        }
      }
      for (const [id, before] of seen) {
        const r = records.get(id);
        if (r === undefined) {
          fail(round, `(b) ${id}, on disk since round ${before.round}, disappeared`);
          continue;
        }
        const rank = rankOf(r);
        const outcome = r.status === "active" ? undefined : String(r.snapshot.value);
        if (rank < before.rank || (before.outcome !== undefined && outcome !== before.outcome)) {
          fail(round, `(b) ${id} went back: rank ${before.rank}/${before.outcome} → ${rank}/${outcome}`);
        }
      }
      for (const [id, r] of records) {
        if (r.status === "error") fail(round, `(b) actor ${id} is stored as failed`);
        if (r.status === "done" && r.snapshot.value !== "responded" && r.snapshot.value !== "escalated") {
          fail(round, `(b) collaboration ${id} ended ${String(r.snapshot.value)}`);
        }
        const outcome = r.status === "active" ? undefined : String(r.snapshot.value);
        seen.set(id, {
          rank: rankOf(r),
          ...(outcome === undefined ? {} : { outcome }),
          round: seen.get(id)?.round ?? round,
        });
      }

      // (c) Discord as the runtime left it.
      const log = readDiscordLog(discordFile);
      if (log.tornTailBytes > 0) stats.tornDiscordTails += 1;
      const messages = log.entries.filter((e): e is DeliveredMessage => e.kind === "message");
      const threadIds = new Set(log.entries.flatMap((e) => (e.kind === "thread" ? [e.threadId] : [])));
      const byNonce = new Map<string, DeliveredMessage>();
      for (const m of messages) {
        const key = `${m.asAgentId}:${m.nonce}`;
        if (byNonce.has(key)) fail(round, `(c) Discord stored two messages with nonce ${m.nonce}`);
        byNonce.set(key, m);
      }
      // At most once: per request, each reminder number and the escalation at most once, in order.
      const requests = byRequest(messages);
      for (const [text, { mentions, posts }] of requests) {
        if (posts.join() !== FULL_SEQUENCE.slice(0, posts.length).join()) {
          fail(round, `(c) "${text}": reminders/escalation delivered as ${posts.join(", ")}`);
        }
        if (mentions.length > 1)
          fail(round, `(c) "${text}": the mention was delivered ${mentions.length} times`);
      }
      // At least once: what a record says was delivered is in Discord.
      for (const [id, r] of records) {
        if (!isSent(r) || r.meta?.threadId === undefined) continue;
        const text = r.snapshot.context?.message ?? "";
        const request = requests.get(text);
        const mention = byNonce.get(`ruda:${discordNonce(`${id}:mention`)}`);
        if (mention === undefined || !mention.content.endsWith(text)) {
          fail(round, `(c) ${id} is recorded as sent, but its mention is not in Discord`);
        }
        const posts = request?.posts ?? [];
        const attempts = r.meta.mention?.attempts ?? 1;
        if (posts.filter((p) => p.startsWith("R")).length < attempts - 1) {
          fail(
            round,
            `(c) ${id} counts ${attempts} deliveries but Discord holds ${posts.join(", ") || "no reminder"}`,
          );
        }
        if (r.snapshot.value === "escalated" && !posts.includes("E")) {
          fail(round, `(c) ${id} is escalated but no escalation was delivered`);
        }
        // Every send opens a thread of its own: from a starter in the channel that pings nobody, so
        // the thread has the starter's id (and the mention inside it is handled there).
        const starter = byNonce.get(`ruda:${discordNonce(`${id}:starter`)}`);
        if (
          starter?.channelId !== CHANNEL ||
          starter.mentionUserIds.length > 0 ||
          starter.messageId !== r.meta.threadId ||
          !threadIds.has(starter.messageId)
        ) {
          fail(
            round,
            `(c) ${id}: no starter in the channel that its thread ${r.meta.threadId} was opened from`,
          );
        }
        // Where: the mention is posted inside the thread, and its reminders and the thread the runtime
        // tracks are that one thread.
        const threads = new Set([mention?.channelId, ...(request?.threads ?? [])]);
        threads.delete(undefined);
        if (threads.size > 1 || !threads.has(r.meta.threadId)) {
          misplaced.set(
            id,
            `mention in ${String(mention?.channelId)}, reminders/escalation in ` +
              `${[...(request?.threads ?? [])].join(", ") || "none yet"}, tracked thread ${r.meta.threadId}`,
          );
        }
      }
      return { records, messages, requests, files };
    };

    // What a SIGKILL is expected to leave: a stale lock, and a line cut short at the end of an append-only
    // file (the event log; a journal segment) that was never acknowledged.
    const ALLOWED_WARNING =
      /took over the stale lock of process \d+|took over an unreadable lock file|does not end with a newline|skipped \d+ of \d+ lines that are not readable events|ignored the torn last line of \S+journal-\d+\.ndjson/;
    const collect = (child: Child, round: number) => {
      for (const w of child.warnings)
        if (!ALLOWED_WARNING.test(w)) unexpectedWarnings.push(`round ${round}: ${w}`);
      for (const line of child.lines) {
        if (line.ack !== undefined && line.threadId !== undefined)
          acked.set(line.ack, { threadId: line.threadId, round });
        if (line.durableMs !== undefined) durableMs.push(line.durableMs);
        if (line.ack !== undefined && line.onDiskAtResolve === false) notOnDiskAtResolve.push(line.ack);
        if (line.answered !== undefined && line.outcome !== undefined)
          answered.set(line.answered, line.outcome);
        if (line.rejected !== undefined) rejected.push(line.rejected);
      }
    };

    let next = new Child(stateDir, discordFile, SEED);
    let lock: LockState = { kind: "missing" };
    const roundTimes: number[] = [];
    let passed = false;
    try {
      for (let round = 1; round <= KILLS; round++) {
        const roundStart = performance.now();
        const child = next;
        await child.waitFor("loaded", (l) => l.loaded !== undefined);
        const early = random() < EARLY_KILL_SHARE;
        const delay = early ? Math.floor(random() * 40) : 150 + Math.floor(random() * 551);
        child.go("load");
        // The next child loads its modules (≈ 1 s under tsx) while this one runs; it touches nothing
        // of the state directory or Discord before its "go".
        next = new Child(stateDir, discordFile, SEED + round);
        await child.waitFor(
          early ? "starting" : "ready",
          (l) => (early ? l.starting : l.ready) !== undefined,
        );
        await sleep(delay);
        child.proc.kill("SIGKILL");
        const exit = await child.closed;
        killed.add(child.pid);
        if (early) stats.earlyKills += 1;
        if (exit.signal !== "SIGKILL")
          fail(round, `the child exited on its own (${JSON.stringify(exit)}): ${child.describe()}`);
        if (child.errors.length > 0) fail(round, `the child wrote errors: ${child.describe()}`);

        // (d) The start was fine, and a stale lock left by the previous kill was taken over, naming its pid.
        const ready = child.has((l) => l.ready !== undefined);
        if (!ready) stats.killsBeforeReady += 1;
        else if (lock.kind === "held") {
          const takeover = `took over the stale lock of process ${lock.pid},`;
          if (child.warnings.some((w) => w.includes(takeover))) stats.lockTakeovers += 1;
          else
            fail(
              round,
              `(d) the stale lock of ${lock.pid} was not reported as taken over: ${child.describe()}`,
            );
        } else if (
          lock.kind === "unreadable" &&
          !child.warnings.some((w) => w.includes("unreadable lock file"))
        ) {
          fail(round, `(d) the unreadable lock file was not reported: ${child.describe()}`);
        }
        collect(child, round);
        lock = readLock(stateDir);
        if (lock.kind === "held" && (!killed.has(lock.pid) || isAlive(lock.pid))) {
          fail(round, `(d) the lock names ${lock.pid}, which is not a killed child`);
        }
        checkState(round);
        roundTimes.push(performance.now() - roundStart);
        if (failures.length > 0) break;
      }

      // The last child runs without a kill: every acknowledged mention must end (or still be on its way).
      const last = next;
      await last.waitFor("loaded", (l) => l.loaded !== undefined);
      last.go("idle");
      await last.waitFor("ready", (l) => l.ready !== undefined);
      await sleep(1_500);
      last.proc.kill("SIGTERM");
      const stoppedAt = Date.now();
      const exit = await last.closed;
      expect(exit, last.describe()).toEqual({ code: 0, signal: null });
      expect(last.has((l) => l.stopped !== undefined)).toBe(true);
      collect(last, KILLS + 1);
      expect(readLock(stateDir), "stop() releases the lock").toEqual({ kind: "missing" });
      const { records, requests, messages, files } = checkState(KILLS + 1);

      const outcomes = { responded: 0, escalated: 0, progressing: 0 };
      for (const [id] of acked) {
        const r = records.get(id);
        if (r === undefined) continue; // reported by checkState
        if (r.status === "active") {
          if ((r.delayed ?? []).some((d) => d.dueAt > stoppedAt)) outcomes.progressing += 1;
          else
            failures.push(
              `final: acknowledged ${id} is stuck at ${String(r.snapshot.value)} with no timer due`,
            );
          continue;
        }
        if (r.snapshot.value === "responded") outcomes.responded += 1;
        if (r.snapshot.value === "escalated") {
          outcomes.escalated += 1;
          const posts = requests.get(r.snapshot.context?.message ?? "")?.posts ?? [];
          if (posts.join() !== FULL_SEQUENCE.join()) {
            failures.push(`final: escalated ${id} got ${posts.join(", ")}, not ${FULL_SEQUENCE.join(", ")}`);
          }
        }
      }
      const entries = readDiscordLog(discordFile).entries;
      const nonceHits = entries.filter((e) => e.kind === "nonce-hit").length;
      const used = new Set(messages.map((m) => m.channelId));
      const emptyThreads = entries.filter((e) => e.kind === "thread" && !used.has(e.threadId)).length;
      const archiveKb = walk(join(stateDir, "archive")).reduce((n, f) => n + statSync(f).size, 0) / 1024;
      durableMs.sort((a, b) => a - b);
      const quantile = (q: number) =>
        durableMs[Math.min(durableMs.length - 1, Math.floor(q * durableMs.length))];
      const elapsed = (performance.now() - started) / 1_000;
      console.log(
        [
          `crash test: seed ${SEED}, ${killed.size} SIGKILLs (${stats.earlyKills} aimed into start-up, ` +
            `${stats.killsBeforeReady} before ready), ${elapsed.toFixed(1)} s, rounds ${Math.min(...roundTimes).toFixed(0)}–` +
            `${Math.max(...roundTimes).toFixed(0)} ms`,
          `  acknowledged ${acked.size} mentions, ${answered.size} answered; at the end ${outcomes.responded} responded, ` +
            `${outcomes.escalated} escalated, ${outcomes.progressing} still progressing; ${records.size} records on disk`,
          `  ${acked.size - notOnDiskAtResolve.length} of ${acked.size} acknowledged sends were on disk when ` +
            `discordSend resolved; acks printed ${quantile(0.5)} ms (median), ${quantile(0.95)} ms (p95), ` +
            `${durableMs.at(-1)} ms (max) after it; archive ${archiveKb.toFixed(0)} KB`,
          `  Discord: ${messages.length} messages, ${nonceHits} re-posts answered by nonce, ${emptyThreads} threads ` +
            `left empty; ${stats.lockTakeovers} stale ` +
            `locks taken over; ${files.json} state files parse; torn: ${stats.tornLogLines} event-log lines, ` +
            `${stats.tornDiscordTails} Discord tails; temp files left: ${files.temporary.length}` +
            (files.temporary.length === 0
              ? ""
              : ` (${files.temporary.map((f) => f.slice(stateDir.length + 1)).join(", ")})`),
        ].join("\n"),
      );

      // Posted to Discord, but the collaboration never reached the disk: nobody would remind or escalate.
      const stored = new Set([...records.values()].map((r) => r.snapshot.context?.message));
      const untracked = [...requests].filter(([text, r]) => r.mentions.length > 0 && !stored.has(text));
      // A thread opened twice (a creation re-run after a kill) would split the mention from its reminders.
      expect(
        [...misplaced].map(([id, what]) => `${id}: ${what}`),
        "mention, reminders and tracked thread are one thread",
      ).toEqual([]);
      expect(
        untracked.map(([text, r]) => `"${text}" in ${r.mentions[0]?.channelId}`),
        "every posted mention is tracked",
      ).toEqual([]);
      expect(failures, `seed ${SEED}`).toEqual([]);
      expect(unexpectedWarnings, `seed ${SEED}`).toEqual([]);
      expect(rejected, "no send was rejected").toEqual([]);
      expect(notOnDiskAtResolve, "discordSend resolves once the send is on disk").toEqual([]);
      expect(killed.size).toBe(KILLS);
      expect(acked.size, "the load ran").toBeGreaterThanOrEqual(10);
      expect(outcomes.escalated).toBeGreaterThan(0);
      expect(outcomes.responded).toBeGreaterThan(0);
      passed = true;
    } finally {
      for (const proc of live) proc.kill("SIGKILL");
      if (passed && process.env.CRASH_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
      else console.log(`crash test: state kept in ${dir}`);
    }
  }, 120_000);
});

describe("crash: corrupt files at start-up", () => {
  it("quarantines a truncated shard to *.corrupt-<time>, says so, and starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "a2a-corrupt-"));
    const stateDir = join(dir, "state");
    mkdirSync(join(stateDir, "actors"), { recursive: true });
    const record: ActorRecord = {
      id: "collab-lost",
      machineId: "collaborate",
      machineVersion: 1,
      snapshot: { status: "active", value: "awaitingResponse", context: {} },
      status: "active",
      updatedAt: Date.now(),
    };
    const whole = shardFileText([record]);
    const truncated = whole.slice(0, Math.floor(whole.length / 2));
    const files = {
      shard: join(stateDir, "actors", "shard-07.ndjson"),
      log: join(stateDir, "coordination-events.ndjson"),
    };
    writeFileSync(files.shard, truncated);
    const logText =
      `${JSON.stringify({ type: "a2a.send", ts: 1, routeKey: "route-1", conversationId: "conv-1" })}\n` +
      "garbage line\n" +
      '{"type":"a2a.complete","ts":"yesterday","routeKey":"r","conversationId":"c"}\n' +
      '{"type":"a2a.se';
    writeFileSync(files.log, logText);
    writeFileSync(join(stateDir, ".lock"), "{ half a lock");

    const child = new Child(stateDir, join(dir, "discord.ndjson"), SEED);
    try {
      await child.waitFor("loaded", (l) => l.loaded !== undefined);
      child.go("load");
      await child.waitFor("ready", (l) => l.ready !== undefined);
      const ack = await child.waitFor("an acknowledged send", (l) => l.ack !== undefined);
      child.proc.kill("SIGTERM");
      expect(await child.closed, child.describe()).toEqual({ code: 0, signal: null });
      expect(child.errors).toEqual([]);

      const STAMP = String.raw`\.corrupt-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z(-\d+)?$`;
      const movedOf = (file: string) => {
        const dirOf = join(file, "..");
        const name = file.slice(dirOf.length + 1);
        const moved = readdirSync(dirOf).filter((n) =>
          new RegExp(`^${name.replace(/\./g, "\\.")}${STAMP}`).test(n),
        );
        expect(moved, `${name} quarantined once`).toHaveLength(1);
        return join(dirOf, moved[0] as string);
      };
      // Quarantined, byte for byte: kept for inspection, not overwritten.
      expect(readFileSync(movedOf(files.shard), "utf8")).toBe(truncated);

      // Reported, each naming the file.
      const expectWarning = (pattern: RegExp) =>
        expect(
          child.warnings.some((w) => pattern.test(w)),
          `${pattern} in:\n${child.warnings.join("\n")}`,
        ).toBe(true);
      expectWarning(
        /corrupt state file .*shard-07\.ndjson: line 2 is cut short.*moved it to .*shard-07\.ndjson\.corrupt-/,
      );
      expectWarning(/coordination-events\.ndjson does not end with a newline/);
      expectWarning(/took over an unreadable lock file/);

      // Started: the send went through and is on disk.
      const records = readActorRecords(stateDir);
      expect(records.has("collab-lost")).toBe(false);
      expect(records.get(ack.ack as string)?.meta?.threadId).toBe(ack.threadId);
      const scan = scanStateFiles(stateDir);
      expect(scan.unparsable).toEqual([]);
      // The event log is an append-only audit trail: kept, with new events on lines of their own.
      const log = readFileSync(files.log, "utf8");
      expect(log.startsWith(logText)).toBe(true);
      for (const line of log
        .slice(logText.length)
        .split("\n")
        .filter((l) => l !== "")) {
        expect(() => JSON.parse(line) as unknown).not.toThrow();
      }
    } finally {
      if (!child.has((l) => l.stopped !== undefined)) child.proc.kill("SIGKILL");
      await child.closed;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
