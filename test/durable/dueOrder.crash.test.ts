// The order of XState delays across SIGKILL, in real processes and real time (dueOrderChild.ts, a lowdb
// store in a temp dir): two parallel delays whose firing order decides the final state. The process is
// killed while both are pending; a new process on the same state dir must end in the state plain XState
// reaches uninterrupted, with the delays fired in the same order. Only order and final state are
// compared, not how late anything fired.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { createActor } from "xstate";
import { tempDir } from "../support/tempDir.js";
import { raceMachine, type RaceInput } from "./conformance/race.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** Runs dueOrderChild.ts; resolves with its child process and its stdout once `line` has appeared. */
function run(args: string[], line: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/durable/dueOrderChild.ts", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = line.exec(out);
      if (match !== null) resolve({ child, match });
    });
    child.once("exit", (code) => reject(new Error(`dueOrderChild exited (${code}) before printing ${line}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

function killed(child: ChildProcess): Promise<void> {
  const exit = exited(child);
  child.kill("SIGKILL");
  return exit;
}

const sleepUntil = (at: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

const orderLog = (stateDir: string) => {
  const file = join(stateDir, "order.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
};

/** What plain XState does with the race, uninterrupted: the order the delays fire in, the final state. */
function xstateRace(input: RaceInput) {
  const order: string[] = [];
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  try {
    const actor = createActor(
      raceMachine((label) => order.push(label)),
      { input },
    ).start();
    vi.advanceTimersByTime(input.slowMs + 1);
    const { status, value, context } = actor.getSnapshot();
    actor.stop();
    return { order, final: { status, value, context } };
  } finally {
    vi.useRealTimers();
  }
}

/** Spawns the race in one process, kills it with both delays pending, restarts at `restartAt(due)`. */
async function killAndRestart(input: RaceInput, restartAt: (due: { fast: number; slow: number }) => number) {
  const stateDir = tempDir("a2a-due-order-");
  const first = await run([stateDir, "spawn", String(input.fastMs), String(input.slowMs)], /due (\d+) (\d+)/);
  const due = { fast: Number(first.match[1]), slow: Number(first.match[2]) };
  await killed(first.child);
  // The first process blocked its event loop once the actor was durable: nothing fired before the kill.
  expect(orderLog(stateDir)).toEqual([]);
  await sleepUntil(restartAt(due));
  const second = await run([stateDir, "resume"], /final (.+)\n/);
  const final: unknown = JSON.parse(second.match[1] ?? "null");
  await exited(second.child);
  return { order: orderLog(stateDir), final };
}

it("killed with both delays pending, restarted after both due times: XState's order and final state", async () => {
  // `slow` is scheduled first, `fast` falls due first.
  const input = { fastMs: 400, slowMs: 1500 };
  const expected = xstateRace(input);
  expect(expected.order).toEqual(["fast", "slow"]);
  expect(expected.final).toMatchObject({ status: "done", value: { slow: "lost", fast: "won" } });
  const actual = await killAndRestart(input, (due) => due.slow + 300);
  expect(actual).toEqual(expected);
}, 15_000);

it("restarted with one delay overdue and one not yet due: XState's order and final state", async () => {
  const input = { fastMs: 400, slowMs: 4000 };
  const expected = xstateRace(input);
  expect(expected.order).toEqual(["fast", "slow"]);
  const actual = await killAndRestart(input, (due) => due.fast + 300);
  expect(actual).toEqual(expected);
}, 15_000);
