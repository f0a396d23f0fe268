// Durable XState delays across SIGKILL: a process hosting a generic machine whose invoked child waits
// `after: { 3000 }` is killed; a new process on the same state dir fires the wait at its original
// time (or at once, if that time has passed), and once.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../support/tempDir.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** Starts the host process; resolves with its "due" and "ready" times once it printed "ready". */
function startHost(stateDir: string, mode: "spawn" | "resume") {
  const child = spawn(process.execPath, ["--import", "tsx", "test/durable/hostChild.ts", stateDir, mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise<{ child: ChildProcess; dueAt?: number; ready: number }>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /ready (\d+)/.exec(out);
      if (ready === null) return;
      const due = /due (\d+)/.exec(out);
      resolve({ child, ready: Number(ready[1]), ...(due === null ? {} : { dueAt: Number(due[1]) }) });
    });
    child.once("exit", (code) => reject(new Error(`the host process exited (${code}) before it was ready`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The times the wait fired, once `count` are there (or after `limitMs`). */
async function firings(stateDir: string, count: number, limitMs: number): Promise<number[]> {
  const file = join(stateDir, "fired.log");
  const started = Date.now();
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];
    if (lines.length >= count || Date.now() - started > limitMs) return lines.map(Number);
    await sleep(20);
  }
}

it("restarted 1 s after a SIGKILL, the invoked child's after(3000) fires at its original time, once", async () => {
  const stateDir = tempDir("a2a-durable-kill-");
  const first = await startHost(stateDir, "spawn");
  const due = first.dueAt ?? Number.NaN;
  await killed(first.child);
  await sleep(1_000);
  const second = await startHost(stateDir, "resume");
  const [fired, ...again] = await firings(stateDir, 2, Math.max(0, due - Date.now()) + 2_500);
  expect(fired).toBeGreaterThanOrEqual(due);
  // Re-armed with the whole delay at restart it would fire 3 s after `ready`: it fires at the due time.
  expect(fired).toBeLessThan(Math.max(due, second.ready) + 1_000);
  expect(again).toEqual([]);
  console.log(
    `durable after(3000), restarted 1 s after SIGKILL: fired ${(fired ?? Number.NaN) - due} ms after its due time`,
  );
  await killed(second.child);
}, 20_000);

it("restarted after the due time, the wait fires at once, once", async () => {
  const stateDir = tempDir("a2a-durable-late-");
  const first = await startHost(stateDir, "spawn");
  const due = first.dueAt ?? Number.NaN;
  await killed(first.child);
  await sleep(Math.max(0, due - Date.now()) + 500);
  const second = await startHost(stateDir, "resume");
  const [fired, ...again] = await firings(stateDir, 2, 2_500);
  expect(fired).toBeGreaterThanOrEqual(second.ready - 50);
  expect(fired).toBeLessThan(second.ready + 1_000);
  expect(again).toEqual([]);
  console.log(
    `durable after(3000), restarted after its due time: fired ${(fired ?? Number.NaN) - second.ready} ms after start`,
  );
  await killed(second.child);
}, 20_000);
