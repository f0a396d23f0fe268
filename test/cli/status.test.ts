import { type ChildProcess, execFile, spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WRITE_SIZE } from "../../src/cli/io.js";
import { type ActorStatusRow, runStatus, type StatusReport, valueText } from "../../src/cli/status.js";
import { formatDuration } from "../../src/cli/textTable.js";
import { shardOf } from "../../src/persistence/index.js";
import { drain, FakeDiscord, tempStateDir, useRuntimeHarness, waitUntil } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { tempDir } from "../support/tempDir.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const SECOND = 1_000;
const MINUTE = 60_000;

const runtime = useRuntimeHarness(T0);

async function status(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runStatus(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err, stdout: out.join("\n"), stderr: err.join("\n") };
}

/**
 * A real state directory written by a real runtime: one collaboration whose mention is left pending
 * (sent at T0, so its first reminder is due at T0 + 5 min) and one sessions_send flow that needed one
 * retry (a rate limit) and finished. The runtime is stopped; the clock is at T0 + 2 s.
 */
async function populatedStateDir(): Promise<{ dir: string; mentionId: string }> {
  const dir = tempStateDir("a2a-status-");
  const gateway = new ScriptedGateway({
    "agent:eden:main": [
      { reply: "리뷰 완료", waits: [{ status: "error", error: "429 rate limit: retry after 2s" }] },
    ],
  });
  const r = runtime({ stateDir: dir, gateway, discord: new FakeDiscord() });
  await r.start();
  const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" });
  if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
  const events: string[] = [];
  r.onEvent((e) => events.push(e.type));
  const flow = r.sessionsSend({
    requesterSessionKey: "agent:ruda:main",
    targetSessionKey: "agent:eden:main",
    message: "[NO_REPLY_NEEDED] 리뷰 부탁",
    timeoutSeconds: 60,
  });
  await waitUntil(() => events.includes("a2a.retry"), "a2a.retry");
  await drain();
  await vi.advanceTimersByTimeAsync(2 * SECOND);
  expect(await flow).toMatchObject({ status: "ok", retryAttempts: 1 });
  await r.stop();
  return { dir, mentionId: sent.mentionId };
}

/** Every file under `dir` with its bytes: to show that status changed nothing. */
function tree(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const visit = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) visit(path);
      else files.set(relative(dir, path), readFileSync(path));
    }
  };
  visit(dir);
  return files;
}

function rowOf(lines: string[], id: string): string {
  const line = lines.find((l) => l.startsWith(id));
  if (line === undefined) throw new Error(`no row for ${id} in:\n${lines.join("\n")}`);
  return line;
}

const children: ChildProcess[] = [];
afterEach(() => {
  // Only the processes this file spawned, by their own handle.
  for (const child of children.splice(0)) child.kill();
});

describe("a2a-statecharts status", () => {
  it("lists a pending mention and a finished flow with their state, attempts, next due time and age", async () => {
    const { dir, mentionId } = await populatedStateDir();
    vi.setSystemTime(T0 + 50 * SECOND);

    const { code, out, err } = await status("--state-dir", dir);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    const [header, ...rest] = out;
    expect(header?.split(/\s{2,}/)).toEqual([
      "ID",
      "MACHINE",
      "STATE",
      "STATUS",
      "ATTEMPTS",
      "NEXT DUE",
      "AGE",
    ]);
    // Aligned: every column starts where its header does.
    const mentionRow = rowOf(rest, mentionId);
    for (const title of ["MACHINE", "STATE", "STATUS", "ATTEMPTS", "NEXT DUE", "AGE"]) {
      expect(mentionRow.charAt((header ?? "").indexOf(title) - 1), title).toBe(" ");
      expect(mentionRow.charAt((header ?? "").indexOf(title)), title).not.toBe(" ");
    }
    expect(mentionRow.split(/\s{2,}/)).toEqual([
      mentionId,
      "collaborate",
      "awaitingResponse > mention:pending",
      "active",
      "mention 1/3",
      "after responseTimeout 2026-11-22T09:05:00Z (in 4m 10s)",
      "50s",
    ]);
    const flowRow = rest.find((line) => line.startsWith("flow-"));
    expect(flowRow?.split(/\s{2,}/).slice(1)).toEqual([
      "a2aFlow",
      "completed",
      "done, archived",
      "retries 1",
      "-",
      "50s",
    ]);
    // Active first; the footer counts and names the directory by its absolute path.
    expect(rest.indexOf(mentionRow)).toBeLessThan(rest.indexOf(flowRow ?? ""));
    expect(out.at(-1)).toBe(`2 actors: 1 active, 1 done, 0 error (1 archived) · state dir ${resolve(dir)}`);

    // Past the due time the reminder shows as overdue.
    vi.setSystemTime(T0 + 6 * MINUTE);
    const later = await status("--state-dir", dir);
    expect(rowOf(later.out, mentionId)).toContain("after responseTimeout 2026-11-22T09:05:00Z (overdue 1m)");
  });

  it("--json prints one document with the actors, the lock and no warnings", async () => {
    const { dir, mentionId } = await populatedStateDir();
    vi.setSystemTime(T0 + 50 * SECOND);
    const { code, out, err } = await status("--json", "--state-dir", dir);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    const report = JSON.parse(out.join("\n")) as StatusReport;
    expect(report).toMatchObject({
      stateDir: resolve(dir),
      now: T0 + 50 * SECOND,
      lock: { kind: "none" },
      warnings: [],
      quarantined: [],
    });
    expect(report.actors).toHaveLength(2);
    const mention = report.actors.find((a) => a.id === mentionId);
    expect(mention).toMatchObject({
      machine: "collaborate",
      state: "awaitingResponse > mention:pending",
      status: "active",
      location: "live",
      attempts: { kind: "mention", count: 1, max: 3 },
      nextDue: {
        event: "after responseTimeout",
        at: T0 + 5 * MINUTE,
        atIso: "2026-11-22T09:05:00.000Z",
        inMs: 4 * MINUTE + 10 * SECOND,
        timers: 1,
      },
      startedAt: T0,
      ageMs: 50 * SECOND,
      ageFrom: "startedAt",
    } satisfies Partial<ActorStatusRow>);
    expect(mention?.file).toBe(
      join(resolve(dir), "actors", `shard-${String(shardOf(mentionId, 32)).padStart(2, "0")}.ndjson`),
    );
    const flow = report.actors.find((a) => a.machine === "a2aFlow");
    expect(flow).toMatchObject({
      status: "done",
      location: "archive",
      attempts: { kind: "retries", count: 1 },
      nextDue: null,
      file: archiveHourFile(resolve(dir)),
    });
  });

  // At a million actors one JSON string or one buffered output would not fit: stdout gets it in pieces.
  it("writes --json and the table through write, in bounded pieces, the same text as line by line", async () => {
    const { dir, mentionId } = await populatedStateDir();
    vi.setSystemTime(T0 + 50 * SECOND);
    for (const flags of [["--json"], []]) {
      const lines = await status(...flags, "--state-dir", dir);
      const stdout: string[] = [];
      const writes: string[] = [];
      const code = await runStatus([...flags, "--state-dir", dir], {
        out: (line) => stdout.push(`${line}\n`),
        err: () => undefined,
        write: async (text) => {
          writes.push(text);
          stdout.push(text);
          return true;
        },
      });
      expect(code).toBe(0);
      expect(stdout.join("")).toBe(`${lines.stdout}\n`);
      expect(writes.join(""), flags.join(" ")).toContain(mentionId);
      expect(Math.max(...writes.map((w) => w.length))).toBeLessThanOrEqual(WRITE_SIZE);
    }
    // --json: JSON.stringify(report, null, 2) exactly, nothing else.
    const json = (await status("--json", "--state-dir", dir)).stdout;
    expect(json).toBe(JSON.stringify(JSON.parse(json), null, 2));
  });

  it("prints --json that parses when its stdout is a pipe (the CLI as installed)", async () => {
    const { dir, mentionId } = await populatedStateDir();
    const root = resolve(import.meta.dirname, "../..");
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", join(root, "src/cli/bin.ts"), "status", "--json", "--state-dir", dir],
      { cwd: root },
    );
    expect(stderr).toBe("");
    const report = JSON.parse(stdout) as StatusReport;
    expect(stdout).toBe(`${JSON.stringify(report, null, 2)}\n`);
    expect(report.stateDir).toBe(resolve(dir));
    expect(report.actors.map((a) => [a.id === mentionId ? "mention" : a.machine, a.status]).sort()).toEqual([
      ["a2aFlow", "done"],
      ["mention", "active"],
    ]);
  });

  it("reads beside a live holder without taking the lock or changing a byte, and says whose it is", async () => {
    const { dir } = await populatedStateDir();
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    children.push(holder);
    const pid = holder.pid;
    if (pid === undefined) throw new Error("spawn gave no pid");
    writeFileSync(join(dir, ".lock"), JSON.stringify({ pid, startedAt: T0, token: "theirs" }));
    const before = tree(dir);

    const { code, out } = await status("--state-dir", dir);
    expect(code).toBe(0);
    expect(out[0]).toBe(
      `note: state dir ${resolve(dir)} is in use by pid ${pid}; showing its last durable state`,
    );
    expect(out.at(-1)).toMatch(/^2 actors: /);
    const json = JSON.parse((await status("--state-dir", dir, "--json")).stdout) as StatusReport;
    expect(json.lock).toMatchObject({ kind: "held", pid, alive: true });
    expect(tree(dir)).toEqual(before);
  });

  it("reads the state dir of a runtime running in this process", async () => {
    const { dir, mentionId } = await populatedStateDir();
    const r = runtime({ stateDir: dir, gateway: new ScriptedGateway(), discord: new FakeDiscord() });
    await r.start();
    const { code, out } = await status("--state-dir", dir);
    expect(code).toBe(0);
    expect(out).toContain(
      `note: state dir ${resolve(dir)} is in use by pid ${process.pid}; showing its last durable state`,
    );
    expect(rowOf(out, mentionId)).toContain("mention 1/3");
  });

  it("reports a corrupt shard file and a corrupt record, lists the rest and moves nothing", async () => {
    const { dir, mentionId } = await populatedStateDir();
    const shard = join(dir, "actors", `shard-${String(shardOf(mentionId, 32)).padStart(2, "0")}.ndjson`);
    writeFileSync(shard, `{"shard":"a2a-snapshot","version":1,"records":1}\n{ "id": "collab-`);
    const archive = archiveHourFile(dir);
    appendFileSync(archive, `${JSON.stringify({ id: "broken-1", machineId: "a2aFlow" })}\n`);
    const before = tree(dir);

    const { code, out, err } = await status("--state-dir", dir);
    expect(code).toBe(0);
    expect(err).toHaveLength(2);
    expect(err[0]).toMatch(new RegExp(`^warning: ${escape(shard)}: line 2 is cut short`));
    expect(err[1]).toMatch(new RegExp(`^warning: ${escape(archive)}: record "broken-1": machineVersion: `));
    expect(out.some((line) => line.startsWith("flow-"))).toBe(true);
    expect(out.some((line) => line.startsWith(mentionId))).toBe(false);
    expect(out.at(-1)).toMatch(/^1 actor: 0 active, 1 done, 0 error \(1 archived\); 2 warnings · state dir /);

    const json = JSON.parse((await status("--json", "-d", dir)).stdout) as StatusReport;
    expect(json.warnings).toEqual([
      { file: shard, problem: expect.stringContaining("line 2 is cut short") },
      { file: archive, id: "broken-1", problem: expect.stringContaining("machineVersion") },
    ]);
    expect(json.actors.map((a) => a.machine)).toEqual(["a2aFlow"]);
    // Byte-identical, and nothing set aside (*.corrupt-*, quarantine/).
    expect(tree(dir)).toEqual(before);
  });

  it("exits 1 with one line naming a missing directory, also the default one", async () => {
    const missing = join(tempStateDir("a2a-status-"), "nope");
    const { code, out, err } = await status("--state-dir", missing);
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([`a2a-statecharts status: state directory ${missing} does not exist`]);

    const cwd = process.cwd();
    const empty = tempDir("a2a-status-cwd-");
    process.chdir(empty);
    try {
      const byDefault = await status();
      expect(byDefault.code).toBe(1);
      expect(byDefault.err).toEqual([
        `a2a-statecharts status: state directory ${join(process.cwd(), ".a2a-state")} does not exist`,
      ]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("lists an empty state directory with a zero footer", async () => {
    const dir = tempStateDir("a2a-status-");
    const { code, out } = await status("-d", dir);
    expect(code).toBe(0);
    expect(out).toEqual([
      `no actors persisted in ${resolve(dir)}`,
      `0 actors: 0 active, 0 done, 0 error (0 archived) · state dir ${resolve(dir)}`,
    ]);
  });

  it("prints usage for --help and exits 2 with one line naming a bad flag or value", async () => {
    const help = await status("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("a2a-statecharts status [--state-dir DIR] [--json]");
    for (const [argv, named] of [
      [["--bogus"], "--bogus"],
      [["--state-dir"], "--state-dir"],
      [["--json=yes"], "--json"],
      [["extra"], "extra"],
      [["--state-dir", ""], "--state-dir"],
    ] as const) {
      const { code, out, err } = await status(...argv);
      expect(code, argv.join(" ")).toBe(2);
      expect(out).toEqual([]);
      expect(err, argv.join(" ")).toHaveLength(1);
      expect(err[0], argv.join(" ")).toContain(named);
    }
  });
});

describe("status formatting", () => {
  it("flattens nested and parallel state values", () => {
    expect(valueText("pending")).toBe("pending");
    expect(valueText({ awaiting: "pending" })).toBe("awaiting.pending");
    expect(valueText({ run: { upload: "busy", download: { retry: "waiting" } } })).toBe(
      "run.upload.busy + run.download.retry.waiting",
    );
    expect(valueText({ idle: {} })).toBe("idle");
    expect(valueText(undefined)).toBe("?");
  });

  it("formats durations in their two largest units", () => {
    expect(formatDuration(250 * SECOND)).toBe("4m 10s");
    expect(formatDuration(MINUTE)).toBe("1m");
    expect(formatDuration(999)).toBe("0s");
    expect(formatDuration(3 * 3_600_000 + 5 * MINUTE + 7 * SECOND)).toBe("3h 5m");
    expect(formatDuration(26 * 3_600_000)).toBe("1d 2h");
    expect(formatDuration(-5)).toBe("0s");
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The one archive hour file of a populated state dir (its finished flow). */
function archiveHourFile(dir: string): string {
  const names = readdirSync(join(dir, "archive")).filter((name) =>
    /^archive-2026-11-22T\d{2}\.ndjson$/.test(name),
  );
  if (names.length !== 1)
    throw new Error(`expected one archive hour file, found ${names.join(", ") || "none"}`);
  return join(dir, "archive", names[0] as string);
}
