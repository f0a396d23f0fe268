import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../persistence/createMemoryStore.js";
import { type A2AConfigInput, type A2AEvent, parseConfig } from "../policies/index.js";
import { type A2ARuntime, createA2ARuntime, type DiscordPort, type GatewayPort } from "../runtime/index.js";
import { RecordingDiscord } from "./RecordingDiscord.js";
import { ScriptedGateway } from "./ScriptedGateway.js";
import { VirtualClock } from "./VirtualClock.js";
import { textLogger } from "../runtime/logger.js";

/** What {@link createTestRuntime} takes; every field is optional. */
export interface TestRuntimeOptions<D extends DiscordPort, G extends GatewayPort> {
  /** The runtime's configuration, as `createA2ARuntime` takes it. */
  config?: unknown;
  /** Default: a {@link ScriptedGateway} with no script (its agents reply nothing). */
  gateway?: G;
  /** Default: a {@link RecordingDiscord}. */
  discord?: D;
  /** The virtual clock's start, in epoch milliseconds. Default: the real time at the call. */
  now?: number;
  /** The retry jitter's randomness, in [0, 1). Default: always 0.5, so retry times are exact. */
  random?: () => number;
}

/** A started runtime on a virtual clock, with its fakes: see {@link createTestRuntime}. */
export interface TestRuntime<D extends DiscordPort, G extends GatewayPort> {
  runtime: A2ARuntime;
  discord: D;
  gateway: G;
  /** Every event the runtime emitted, in order. */
  events: A2AEvent[];
  /** Every warning the runtime gave (instead of the console). */
  warnings: string[];
  /** The virtual time, in epoch milliseconds. */
  now(): number;
  /**
   * Moves virtual time `ms` forward, each timer due firing at its time once the work of the one before
   * has settled (a port that never settles, e.g. a hanging gateway run, keeps it waiting).
   */
  advance(ms: number): Promise<void>;
  /** Stops the runtime and removes everything it kept on disk. */
  stop(): Promise<void>;
}

/**
 * A runtime for a gateway's tests on a virtual clock ("15 minutes later": `await t.advance(15 * 60_000)`),
 * actors in memory, files in a temporary directory `stop()` removes. Calls wait for the start; a bad
 * config throws here, naming each problem. A RecordingDiscord and ScriptedGateway record virtual times.
 */
export function createTestRuntime<
  D extends DiscordPort = RecordingDiscord,
  G extends GatewayPort = ScriptedGateway,
>(o: TestRuntimeOptions<D, G> = {}): TestRuntime<D, G> {
  const start = o.now ?? Date.now();
  if (typeof start !== "number" || !Number.isFinite(start)) {
    throw new TypeError(`createTestRuntime: now must be a time in epoch milliseconds, got ${String(start)}`);
  }
  const clock = new VirtualClock(start);
  const discord = o.discord ?? (new RecordingDiscord() as DiscordPort as D);
  const gateway = o.gateway ?? (new ScriptedGateway() as GatewayPort as G);
  const warnings: string[] = [];
  const events: A2AEvent[] = [];
  const agents = parseConfig(o.config, { onWarning: () => {} }).agents;
  const stateDir = mkdtempSync(join(tmpdir(), "a2a-test-runtime-"));
  let runtime: A2ARuntime;
  try {
    runtime = createA2ARuntime({
      stateDir,
      store: createMemoryStore(),
      // createA2ARuntime checks it, naming each problem.
      config: o.config as A2AConfigInput | undefined,
      gateway,
      discord,
      now: clock.now,
      timers: clock,
      random: o.random ?? (() => 0.5),
      logger: textLogger((message) => warnings.push(message)),
    });
  } catch (error) {
    void rm(stateDir, { recursive: true, force: true });
    throw error;
  }
  if (discord instanceof RecordingDiscord) {
    discord.connect({
      runtime,
      now: clock.now,
      botIdOf: (agentId) => (Object.hasOwn(agents, agentId) ? agents[agentId]?.discordBotId : undefined),
    });
  }
  if (gateway instanceof ScriptedGateway) gateway.useClock(clock.now);
  runtime.onEvent((e) => events.push(e));
  const started = runtime.start();
  started.catch(() => {}); // each call below rethrows it
  let stopped = false;
  return {
    runtime: startedFirst(runtime, started),
    discord,
    gateway,
    events,
    warnings,
    now: clock.now,
    advance: async (ms) => {
      await started;
      await clock.advance(ms, () => runtime.idle());
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await started.then(
          () => runtime.stop(),
          () => undefined,
        );
      } finally {
        await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
}

/** The runtime, each of whose calls waits for its start first (and fails as the start did). */
function startedFirst(runtime: A2ARuntime, started: Promise<void>): A2ARuntime {
  const after =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await started;
      return call(...args);
    };
  return {
    messages: runtime.messages,
    start: () => started,
    stop: after(runtime.stop),
    sessionsSend: after(runtime.sessionsSend),
    discordSend: after(runtime.discordSend),
    handleDiscordMessage: after(runtime.handleDiscordMessage),
    registerSinkThread: after(runtime.registerSinkThread),
    getConversationId: after(runtime.getConversationId),
    mentions: after(runtime.mentions),
    onEvent: runtime.onEvent,
    idle: after(runtime.idle),
  };
}
