import { AsyncLocalStorage } from "node:async_hooks";
import type { FileHandle } from "node:fs/promises";

/**
 * One simulated process: a runtime instance and everything it started. Every call into its runtime
 * runs inside `enter()`, and AsyncLocalStorage carries the generation through promise continuations,
 * I/O callbacks and the timers of the virtual clock, so the fs wrapper can tell whose call it sees.
 */
export interface Generation {
  readonly id: number;
  /** The pid this simulated process reports (`process.pid` inside it); never a real process's. */
  readonly pid: number;
  /** Killed: its calls never settle, its files are closed, its timers never fire. */
  dead: boolean;
  /** File handles it opened and has not closed (the kernel closes them when it dies). */
  readonly handles: Set<FileHandle>;
  /** fs calls started and not settled yet. */
  inflight: number;
  /** Mutating fs calls it has started (writes, syncs, renames, removals, opens for writing). */
  mutations: number;
  /** When to die: after this many mutating calls (the next one never starts). */
  crashAfterMutations?: number;
  /** The mutating call (1-based) that, when it is a FileHandle write, writes only half its buffer. */
  shortWriteAt?: number;
  /** Mutating calls done when the short write happened, if it did. */
  shortWritten?: number;
  /**
   * Scheduling noise: rounds of I/O callbacks each next fs call waits before it starts, one entry per
   * call; they make two processes' calls interleave in the ways a loaded machine would.
   */
  delays?: number[];
}

// Above Linux's largest pid_max (4,194,304): no real process ever has one of these.
const FIRST_FAKE_PID = 5_000_000;

const als = new AsyncLocalStorage<Generation>();
const all = new Map<number, Generation>();
let nextId = 1;

export function newGeneration(): Generation {
  const id = nextId++;
  const generation: Generation = {
    id,
    pid: FIRST_FAKE_PID + id,
    dead: false,
    handles: new Set(),
    inflight: 0,
    mutations: 0,
  };
  all.set(generation.pid, generation);
  return generation;
}

/** Runs `fn` as `generation`: whatever it starts, directly or later, belongs to that generation. */
export function enter<T>(generation: Generation, fn: () => T): T {
  return als.run(generation, fn);
}

export function currentGeneration(): Generation | undefined {
  return als.getStore();
}

/** The simulated process dies: from now on nothing of it runs, and the kernel closes its files. */
export async function kill(generation: Generation): Promise<void> {
  if (generation.dead) return;
  generation.dead = true;
  const handles = [...generation.handles];
  generation.handles.clear();
  await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
}

/**
 * Makes `process.pid` answer the simulated process's pid inside a generation and `process.kill(pid, 0)`
 * tell whether a simulated process is alive, as the lock's liveness check needs; returns the undo.
 */
export function simulateProcesses(): () => void {
  const pid = Object.getOwnPropertyDescriptor(process, "pid");
  const originalKill = process.kill;
  const realKill = originalKill.bind(process);
  const realPid = process.pid;
  Object.defineProperty(process, "pid", {
    configurable: true,
    enumerable: true,
    get: () => als.getStore()?.pid ?? realPid,
  });
  process.kill = (target: number, signal?: string | number) => {
    const simulated = all.get(target);
    if (simulated === undefined) return realKill(target, signal);
    if (signal !== undefined && signal !== 0) throw new Error(`the model test sends no signal ${signal}`);
    if (simulated.dead)
      throw Object.assign(new Error(`kill ESRCH`), { code: "ESRCH", errno: -3, syscall: "kill" });
    return true;
  };
  return () => {
    if (pid !== undefined) Object.defineProperty(process, "pid", pid);
    process.kill = originalKill;
  };
}
