// The state-directory lock between real processes: simultaneous starts, a SIGKILLed holder, and a
// holder whose pid is reused (PID 1 in a fresh PID namespace, as in a container).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { StateDirLockedError, acquireStateDirLock } from "../../src/persistence/index.js";
import { tempDir } from "../support/tempDir.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = ["--import", "tsx", "test/persistence/lockChild.ts"];
const ROUNDS = 200;

const live = new Set<ChildProcess>();
afterAll(() => {
  for (const proc of live) proc.kill("SIGKILL");
});

function track(proc: ChildProcess): ChildProcess {
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
  return proc;
}

function exited(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    else proc.once("exit", () => resolve());
  });
}

type Reply =
  { ready: true } | { round: number; held: boolean; pid?: number | null } | { round: number; released: true };

/** A child in "race" mode: the parent tells it when to acquire and release, over IPC. */
class Racer {
  readonly proc: ChildProcess;
  private readonly replies: Reply[] = [];
  private waiter: (() => void) | undefined;
  private stderr = "";

  constructor(dir: string) {
    this.proc = track(
      spawn(process.execPath, [...CHILD, "race", dir], {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      }),
    );
    this.proc.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.proc.on("message", (reply: Reply) => {
      this.replies.push(reply);
      this.waiter?.();
    });
    this.proc.once("exit", () => this.waiter?.());
  }

  send(message: object): void {
    this.proc.send(message);
  }

  async next(): Promise<Reply> {
    while (this.replies.length === 0) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
        throw new Error(`the lock child ${this.proc.pid} exited: ${this.stderr}`);
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
      this.waiter = undefined;
    }
    return this.replies.shift() as Reply;
  }
}

/** Starts a "hold" child (argv before the node command: e.g. unshare) and resolves once it holds the lock. */
async function holder(dir: string, prefix: string[] = []): Promise<{ proc: ChildProcess; pid: number }> {
  const [command = process.execPath, ...args] = [...prefix, process.execPath, ...CHILD, "hold", dir];
  const proc = track(spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] }));
  let stderr = "";
  proc.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const pid = await new Promise<number>((resolve, reject) => {
    lines.once("line", (line) => resolve((JSON.parse(line) as { held: number }).held));
    proc.once("exit", () => reject(new Error(`the lock holder exited before holding: ${stderr}`)));
  });
  lines.close();
  return { proc, pid };
}

/** SIGKILLs the PID 1 that `unshare --fork` started (by its pid out here): unshare then exits. */
function killNamespaceInit(unshareProc: ChildProcess): void {
  const pid = unshareProc.pid as number;
  const inner = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim());
  if (!Number.isInteger(inner) || inner <= 1) throw new Error(`unshare ${pid} has no child process`);
  process.kill(inner, "SIGKILL");
}

function lockPid(dir: string): number {
  return (JSON.parse(readFileSync(join(dir, ".lock"), "utf8")) as { pid: number }).pid;
}

describe("the state-directory lock between processes", () => {
  it(`${ROUNDS} simultaneous starts of two processes: exactly one holds the directory each time`, async () => {
    const dir = tempDir("a2a-lock-race-");
    const racers = [new Racer(dir), new Racer(dir)];
    for (const r of racers) expect(await r.next()).toEqual({ ready: true });
    const holdersPerRound = new Map<number, number>();
    const refusals = { namingHolder: 0, pidUnknown: 0 };
    const bad: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const r of racers) r.send({ acquire: round }); // same tick: both acquire from scratch at once
      const replies = await Promise.all(racers.map((r) => r.next()));
      const held = replies.flatMap((reply, i) => ("held" in reply && reply.held ? [i] : []));
      holdersPerRound.set(held.length, (holdersPerRound.get(held.length) ?? 0) + 1);
      if (held.length !== 1) {
        bad.push(`round ${round}: ${held.length} holders`);
      } else {
        const winner = racers[held[0] as number] as Racer;
        const refused = replies.find((reply) => "held" in reply && !reply.held);
        if (refused !== undefined && "pid" in refused) {
          if (refused.pid === null) refusals.pidUnknown += 1;
          else if (refused.pid === winner.proc.pid) refusals.namingHolder += 1;
          else
            bad.push(
              `round ${round}: the refusal names pid ${refused.pid}, the holder is ${winner.proc.pid}`,
            );
        }
        if (lockPid(dir) !== winner.proc.pid) bad.push(`round ${round}: the lock file names another pid`);
      }
      for (const [i, r] of racers.entries()) if (held.includes(i)) r.send({ release: round });
      for (const [i, r] of racers.entries())
        if (held.includes(i)) expect(await r.next()).toMatchObject({ released: true });
    }
    for (const r of racers) r.proc.kill("SIGKILL");
    await Promise.all(racers.map((r) => exited(r.proc)));
    const perRound = [...holdersPerRound]
      .sort(([a], [b]) => a - b)
      .map(([n, count]) => `${n} holder(s): ${count}`);
    console.log(
      `lock race: ${ROUNDS} rounds; ${perRound.join(", ")}; refusals naming the holder: ${refusals.namingHolder}, ` +
        `with the pid not yet written: ${refusals.pidUnknown}`,
    );
    expect(bad).toEqual([]);
    expect(holdersPerRound.get(1)).toBe(ROUNDS);
  }, 120_000);

  it("a SIGKILLed holder's lock is free at once, and the next holder is told whose it was", async () => {
    const dir = tempDir("a2a-lock-kill-");
    const first = await holder(dir);
    await expect(acquireStateDirLock(dir)).rejects.toMatchObject({
      name: "StateDirLockedError",
      pid: first.pid,
    });
    first.proc.kill("SIGKILL");
    await exited(first.proc);
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      `state directory ${dir}: took over the stale lock of process ${first.pid}, which ended without ` +
        `releasing it (killed or crashed) (${join(dir, ".lock")})`,
    ]);
    await lock.release();
  }, 30_000);

  const unshare = ["unshare", "--pid", "--fork", "--mount-proc"];
  const unshareProblem = (() => {
    try {
      execFileSync(unshare[0] as string, [...unshare.slice(1), "true"], { stdio: "ignore" });
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  })();

  it.skipIf(unshareProblem !== undefined)(
    `PID reuse: a holder that was PID 1 in its PID namespace is SIGKILLed; the next PID 1 takes the lock${
      unshareProblem === undefined
        ? ""
        : ` (skipped: unshare --pid --fork --mount-proc fails here: ${unshareProblem})`
    }`,
    async () => {
      const dir = tempDir("a2a-lock-pid1-");
      const first = await holder(dir, unshare);
      expect(first.pid).toBe(1);
      expect(lockPid(dir)).toBe(1);
      killNamespaceInit(first.proc);
      await exited(first.proc);

      const second = await holder(dir, unshare);
      expect(second.pid).toBe(1);
      await expect(acquireStateDirLock(dir)).rejects.toBeInstanceOf(StateDirLockedError);
      killNamespaceInit(second.proc);
      await exited(second.proc);
    },
    30_000,
  );
});
