import { rm } from "node:fs/promises";
import { type A2AConfigInput, type A2ARuntime, createA2ARuntime } from "../../../src/index.js";
import { VirtualClock } from "../../../src/testing/index.js";
import { tempDir } from "../tempDir.js";
import { enter, type Generation, kill, newGeneration } from "./generations.js";
import { ProcessTimers } from "./processTimers.js";
import { TimedDiscord } from "./timedDiscord.js";
import { textLogger } from "../../../src/runtime/logger.js";

/** One simulated gateway process: its generation and its runtime. */
export interface Process {
  generation: Generation;
  runtime: A2ARuntime;
}

// Real time a settle may take (disk I/O on a loaded CI), not simulated time.
const SETTLE_LIMIT_MS = 20_000;
// Rounds of I/O callbacks with nothing in flight and nothing due before the runtime counts as settled.
const QUIET_ROUNDS = 4;
// A write retried this many times while a caller waits is a runtime that never answers.
const MAX_WAITED_TIMERS = 1_000;

/**
 * A gateway as the model test drives it: runtimes on one real state directory, one process at a
 * time alive (or two starting at once), a virtual clock, and the Discord they post to.
 */
export class SimulatedGateway {
  readonly clock: VirtualClock;
  readonly discord: TimedDiscord;
  private readonly timers: ProcessTimers;
  readonly dir = tempDir("a2a-model-");
  readonly warnings: string[] = [];
  current: Process | undefined;
  private readonly everyProcess: Process[] = [];

  constructor(
    private readonly config: A2AConfigInput,
    t0: number,
  ) {
    this.clock = new VirtualClock(t0);
    this.timers = new ProcessTimers(this.clock);
    this.discord = new TimedDiscord(this.clock.now);
  }

  /** A new process and its runtime (not started). */
  spawn(): Process {
    const generation = newGeneration();
    const runtime = enter(generation, () =>
      createA2ARuntime({
        stateDir: this.dir,
        config: this.config,
        discord: this.discord,
        now: this.clock.now,
        timers: this.timers.of(generation),
        logger: textLogger((w) => this.warnings.push(`[process ${generation.id}] ${w}`)),
      }),
    );
    const proc = { generation, runtime };
    this.everyProcess.push(proc);
    return proc;
  }

  /** Calls into the running process, as that process. */
  run<T>(fn: (runtime: A2ARuntime) => Promise<T>): Promise<T> {
    const proc = this.requireCurrent();
    return enter(proc.generation, () => fn(proc.runtime));
  }

  /** Runs `fn` as the process `proc` (which need not be the running one). */
  enterProcess<T>(proc: Process, fn: () => T): T {
    return enter(proc.generation, fn);
  }

  /** Of processes started together, `holder` runs on; the others exit. */
  async adopt(holder: Process, started: Process[]): Promise<void> {
    for (const other of started) if (other !== holder) await kill(other.generation);
    holder.generation.delays = undefined;
    this.current = holder;
    await this.settle();
  }

  async start(): Promise<void> {
    const proc = this.spawn();
    await enter(proc.generation, () => proc.runtime.start());
    this.current = proc;
    await this.settle();
  }

  /**
   * A process that starts and is killed after `afterWrites` writes (or once started and settled, if it
   * writes less): a crash during recovery. No process runs afterwards.
   */
  async startAndCrash(afterWrites: number): Promise<void> {
    const proc = this.spawn();
    proc.generation.crashAfterMutations = afterWrites;
    this.current = proc;
    await this.drive(enter(proc.generation, () => proc.runtime.start()));
    await this.crash();
  }

  /** A clean stop; the process then exits (its files must all be closed by then). */
  async stop(): Promise<void> {
    const proc = this.requireCurrent();
    await this.run((r) => r.stop());
    this.current = undefined;
    const open = proc.generation.handles.size;
    await kill(proc.generation);
    if (open > 0) throw new Error(`stop() of process ${proc.generation.id} left ${open} file(s) open`);
  }

  /**
   * Lets the running process work until it is quiet: timers due now fire, and no fs call is in flight
   * for a few rounds of I/O callbacks. Returns early if the process dies (a crash point was reached).
   * The first round never counts as quiet: timers the clock's last move fired start their work in it.
   */
  async settle(): Promise<void> {
    const generation = this.requireCurrent().generation;
    const started = performance.now();
    for (let quiet = -1; quiet < QUIET_ROUNDS && !generation.dead;) {
      if (performance.now() - started > SETTLE_LIMIT_MS) {
        throw new Error(
          `the runtime did not settle within ${SETTLE_LIMIT_MS} ms of real time (${generation.inflight} fs calls in flight)`,
        );
      }
      const fired = this.moveTo(this.clock.now());
      await new Promise<void>((resolve) => setImmediate(resolve));
      quiet = fired || generation.inflight > 0 ? 0 : quiet + 1;
    }
  }

  /**
   * Waits for a call into the running process, letting it work; if it still waits once the process is
   * quiet, it waits for a timer (a write retried after a backoff): the clock moves to that timer.
   * Resolves with the call's outcome, or `dead` if the process died first (it answered nobody).
   */
  async drive<T>(call: Promise<T>): Promise<{ dead: true } | { dead: false; value: T }> {
    const generation = this.requireCurrent().generation;
    const settled: { outcome?: { value: T } | { error: unknown } } = {};
    call.then(
      (value) => (settled.outcome = { value }),
      (error: unknown) => (settled.outcome = { error }),
    );
    for (let moves = 0; ; moves++) {
      await this.settle();
      if (generation.dead) return { dead: true };
      if (settled.outcome !== undefined) break;
      const next = this.nextDue();
      if (next === undefined) throw new Error("a call into the runtime waits for nothing that can happen");
      if (moves === MAX_WAITED_TIMERS) {
        throw new Error(`a call into the runtime still waits after ${MAX_WAITED_TIMERS} of its timers fired`);
      }
      this.moveTo(Math.max(this.clock.now(), next));
    }
    const { outcome } = settled;
    if ("error" in outcome) throw outcome.error;
    return { dead: false, value: outcome.value };
  }

  /** Moves the clock to `time`, stopping at each timer due on the way and letting the runtime settle there. */
  async advanceTo(time: number): Promise<void> {
    const generation = this.requireCurrent().generation;
    for (let next = this.nextDue(); next !== undefined && next <= time; next = this.nextDue()) {
      this.moveTo(Math.max(this.clock.now(), next));
      await this.settle();
      if (generation.dead) return;
    }
    this.moveTo(time);
    await this.settle();
  }

  /**
   * Moves the clock to `time` (also while no process runs), firing every live timer due by then;
   * whether any fired.
   */
  moveTo(time: number): boolean {
    this.timers.dropDead();
    return this.clock.moveTo(time) > 0;
  }

  /** When a live process's timer is due next, if any is. */
  private nextDue(): number | undefined {
    this.timers.dropDead();
    return this.clock.nextDue();
  }

  /** The running process is killed now (if its crash point did not come first). */
  async crash(): Promise<void> {
    const proc = this.requireCurrent();
    this.current = undefined;
    await kill(proc.generation);
  }

  /** Removes the state directory; every process is dead by then. */
  async dispose(): Promise<void> {
    for (const p of this.everyProcess) {
      p.generation.crashAfterMutations = undefined;
      if (!p.generation.dead) await enter(p.generation, () => p.runtime.stop()).catch(() => undefined);
      await kill(p.generation);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The running process. */
  running(): Process {
    return this.requireCurrent();
  }

  private requireCurrent(): Process {
    if (this.current === undefined) throw new Error("no runtime is running");
    return this.current;
  }
}
