import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { join, resolve } from "node:path";
import type { InspectionEvent } from "xstate";
import { bridgeDiscordJs, createDiscordJsPort } from "../../discord/index.js";
import { snowflakeTimestamp } from "../../testing/emulator/snowflake.js";
import { type ClockPace, VirtualClock } from "../../testing/VirtualClock.js";
import { ScriptedGateway } from "../../testing/ScriptedGateway.js";
import { acquireStateDirLock, readStateDir } from "../../persistence/index.js";
import { type A2ARuntime, createA2ARuntime, type DiscordSendParams } from "../../runtime/index.js";
import { type A2AEvent, parseConfig } from "../../policies/index.js";
import { type Cast, demoConfig, emulatedCast, type RealDiscordTarget, realCast } from "./cast.js";
import {
  gatewayProcessCommand,
  type GatewayProcessInput,
  type GatewayProcessOutput,
} from "./gatewayProcess.js";
import { type DemoWorld, finalMention, isReminder, SCENARIOS, type Scenario } from "./scenarios.js";
import { ScriptedBots, sleep } from "./ScriptedBots.js";
import { demoStamp, Timeline } from "./Timeline.js";
import { textLogger } from "../../runtime/logger.js";
import { computeFigures } from "../statsFigures.js";

export interface DemoOptions {
  /** Demo time runs this many times faster than real time. */
  speed: number;
  stateDir: string;
  /** Real Discord instead of the bundled emulator. */
  discord?: RealDiscordTarget;
  /** How long an agent has to answer a mention before a reminder. */
  responseTimeoutMs: number;
  /** Also given every inspection event (the `inspect` command's viewers). */
  inspect?: (event: InspectionEvent) => void;
  print: (line: string) => void;
  /** A live progress line, redrawn in place (a terminal); "" when the demo is done. */
  progress?: (line: string) => void;
}

export interface ScenarioOutcome {
  title: string;
  expected: string;
  actual: string;
  passed: boolean;
  skipped?: string;
}

export type DemoReport = Awaited<ReturnType<typeof runDemo>>;

// Marks a state dir the demo made, so that the next run may wipe it (and no other directory).
const MARKER = "a2a-demo.json";

/** Empties the state dir for a fresh run; refuses a dir the demo did not make or one a live process holds. */
async function prepareStateDir(dir: string): Promise<void> {
  if (existsSync(dir)) {
    const entries = await readdir(dir);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new Error(
        `${dir} holds files the demo did not make; pass --state-dir with a new or a demo directory`,
      );
    }
    if (entries.length > 0) {
      // A previous demo's stale lock is expected here: the directory is wiped anyway.
      const lock = await acquireStateDirLock(dir, { onWarning: () => {} });
      await lock.release();
      await rm(dir, { recursive: true, force: true });
    }
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, MARKER), `${JSON.stringify({ createdAt: new Date().toISOString() })}\n`);
}

/** The mention the killed gateway sent. */
type DoomedMention = Extract<Awaited<ReturnType<A2ARuntime["discordSend"]>>, { status: "sent" }>;

/** The first gateway: a process that sends one mention, then is killed with SIGKILL mid-wait. */
async function runDoomedGateway(
  input: GatewayProcessInput,
  timeline: Timeline,
  clock: VirtualClock,
  killAfterMs: number,
): Promise<DoomedMention> {
  const { file, execArgv } = gatewayProcessCommand();
  const child: ChildProcess = spawn(process.execPath, [...execArgv, file], {
    env: { ...process.env, A2A_DEMO_GATEWAY: JSON.stringify(input) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid ?? -1;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    for await (const line of lines) {
      const output = JSON.parse(line) as GatewayProcessOutput;
      if (output.type === "line") timeline.echo(output.text);
      if (output.type === "failed") throw new Error(`the first gateway failed: ${output.message}`);
      if (output.type === "sent") {
        const result = output.result as DoomedMention;
        if (result.status !== "sent") throw new Error(`the first gateway's discord_send: ${line}`);
        await sleep(clock, output.at + killAfterMs - clock.now());
        child.kill("SIGKILL");
        await exited;
        timeline.note(
          `💥 gateway pid ${pid} killed with SIGKILL while ${input.send.targetAgentId}'s answer is awaited`,
          input.send.topicId,
        );
        return result;
      }
    }
    throw new Error(`the first gateway exited before sending${stderr === "" ? "" : `: ${stderr.trim()}`}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

const RESTART = {
  key: "restart",
  title:
    "The gateway is killed (kill -9) while Ruda waits for Seum; restarted, it still reminds Seum on time, once",
};

/** Plays the scenarios on the whole control plane in accelerated time, with a live timeline; returns the summary's facts. */
export async function runDemo(o: DemoOptions) {
  const startedAt = Date.now();
  const stateDir = resolve(o.stateDir);
  // The scenarios take about 20 minutes of demo time: starting that far back, the demo ends about
  // now, so the ages and due times that `status` shows afterwards read naturally. Real Discord
  // stamps messages itself, so there demo time is real time.
  const clock = new VirtualClock(startedAt - (o.discord === undefined ? 20 * 60_000 : 0));
  clock.run(1);
  // Demo time is counted from the last change of speed: from the start of the scenarios.
  const origin = () => clock.pace as ClockPace;
  const elapsed = () => clock.now() - origin().at;
  const timeline = new Timeline({ elapsed, print: o.print });
  // Numbered in the order they start; a scenario's lines carry its tag through the interleaving.
  [RESTART, ...SCENARIOS].forEach(({ key }, i) => timeline.claim(key, `[${i + 1} ${key}]`));
  const warn = (message: string) => timeline.note(`warning: ${message}`);
  await prepareStateDir(stateDir);

  o.print(`a2a-statecharts demo: demo time runs ${o.speed}× real time; state in ${stateDir}`);
  const cast: Cast = o.discord === undefined ? await emulatedCast(clock) : await realCast(o.discord);
  let runtime: A2ARuntime | undefined;
  let detach = (): void => {};
  try {
    o.print(`Discord: ${cast.describe}; bots ruda, eden, seum logged in\n`);
    const config = demoConfig(cast, o.responseTimeoutMs, o.speed);
    const a2aRetry = parseConfig(config).discord.a2aRetry;
    // An agent "thinks" 4 s at the default 5-minute timeout; shorter timeouts shorten everything alike.
    const gateway = new ScriptedGateway(
      {},
      { now: clock.now, timers: clock, thinkMs: a2aRetry.responseTimeoutMs / 75 },
    );
    // Setting up ran in real time; the scenarios run in demo time, counted from here.
    clock.run(o.speed);
    const bots = new ScriptedBots(cast.clients, clock, (error) =>
      warn(`a scripted agent's reply failed: ${String(error)}`),
    );

    // 1. The first gateway sends a mention and is killed while it waits for the answer.
    timeline.note(`▶ ${RESTART.title}`, RESTART.key);
    const restartSend: DiscordSendParams = {
      fromAgentId: "ruda",
      targetAgentId: "seum",
      message: "배포 체크리스트 확인 부탁해",
      threadName: "배포 체크리스트",
      topicId: RESTART.key,
    };
    bots.when({
      agentId: "seum",
      matches: (m) => m.content.startsWith("[리마인더 1/") && m.content.includes("배포 체크리스트"),
      reply: "체크리스트 확인했어요. 롤백 스크립트만 보강하면 됩니다.",
      afterMs: a2aRetry.responseTimeoutMs * 0.1,
    });
    const doomed = await runDoomedGateway(
      {
        stateDir,
        config,
        origin: origin(),
        asAgentId: "ruda",
        ...cast.credentials("ruda"),
        send: restartSend,
        claims: [...timeline.claimed],
      },
      timeline,
      clock,
      a2aRetry.responseTimeoutMs * 0.2,
    );

    // 2. The gateway restarts on the same state dir: the lock of the dead process is taken over and
    //    every live actor resumes with its due times.
    const events: A2AEvent[] = [];
    runtime = createA2ARuntime({
      stateDir,
      config,
      gateway,
      discord: createDiscordJsPort(cast.clients),
      now: clock.now,
      timers: clock,
      inspect: (event: InspectionEvent) => {
        timeline.inspect(event);
        o.inspect?.(event);
      },
      logger: textLogger(warn),
    });
    runtime.onEvent((e) => {
      events.push(e);
      timeline.onA2AEvent(e);
    });
    const stored = await readStateDir(stateDir);
    for (const a of stored.actors) if (a.record.status === "active") timeline.stored.add(a.record.id);
    await runtime.start();
    timeline.note(
      `⟲ gateway restarted in this process (pid ${process.pid}) on the same state dir; ` +
        "a collaboration that only waits stays on disk until its next event",
      RESTART.key,
    );
    detach = bridgeDiscordJs(runtime, cast.clients, {
      ...bots.bridgeOptions,
      onError: (error) => warn(String(error)),
    });

    const world: DemoWorld = {
      clock,
      speed: o.speed,
      cast,
      gateway,
      bots,
      runtime,
      timeline,
      responseTimeoutMs: a2aRetry.responseTimeoutMs,
      maxAttempts: a2aRetry.maxAttempts,
    };
    const restartScenario: Scenario = {
      ...RESTART,
      expected: () => "responded after reminder 1/3, posted once, on time",
      play: () => checkRestart(world, doomed),
    };

    // 3. Every other scenario, side by side, on the restarted runtime.
    const all = [restartScenario, ...SCENARIOS];
    let done = 0;
    const realStart = Date.now();
    const progress = () =>
      `${done}/${all.length} scenarios done · demo time ${demoStamp(elapsed())} · ` +
      `${((Date.now() - realStart) / 1000).toFixed(1)} s real`;
    const ticker =
      o.progress === undefined ? undefined : setInterval(() => o.progress?.(`⏱ ${progress()}`), 250);
    let outcomes: ScenarioOutcome[];
    try {
      outcomes = await Promise.all(
        all.map(async (scenario): Promise<ScenarioOutcome> => {
          const expected = scenario.expected(world);
          const { key, title } = scenario;
          const skipped = scenario.unavailable?.(world);
          if (skipped !== undefined) return { title, expected, actual: "skipped", passed: true, skipped };
          if (scenario !== restartScenario) timeline.note(`▶ ${title}`, key);
          let actual: string;
          try {
            actual = await scenario.play(world, key);
          } catch (error) {
            actual = `error: ${error instanceof Error ? error.message : String(error)}`;
          }
          done += 1;
          const passed = actual === expected;
          timeline.note(
            `${passed ? "✔" : "✘"} ${title}: ${actual}${passed ? "" : ` (expected: ${expected})`}`,
            key,
          );
          timeline.echo(`  ── progress: ${progress()}`);
          return { title, expected, actual, passed };
        }),
      );
    } finally {
      clearInterval(ticker);
      o.progress?.("");
    }
    await bots.settled();

    return {
      outcomes,
      stateDir,
      // The figures of `stats` over the run's events.
      figures: computeFigures(events),
      // Agent runs started (a resend included), and mentions (the killed gateway's included).
      llmCalls: gateway.calls.length,
      collaborations: (await runtime.mentions()).length,
      transitions: timeline.transitions,
      demoMs: elapsed(),
      realMs: Date.now() - startedAt,
    };
  } finally {
    detach();
    await runtime?.stop();
    await cast.close();
  }
}

/** The restart scenario's end: one reminder, due a full timeout after the mention, and the answer. */
async function checkRestart(world: DemoWorld, doomed: DoomedMention): Promise<string> {
  const mention = await finalMention(world, doomed.mentionId);
  const messages = await world.cast.messagesIn(doomed.threadId);
  const reminders = messages.filter((m) => isReminder(m.content));
  const first = reminders[0];
  if (first === undefined) return `${mention.status} with no reminder`;
  // A message id (a snowflake) carries the time Discord stamped the message with.
  const due = snowflakeTimestamp(doomed.messageId) + world.responseTimeoutMs;
  const late = snowflakeTimestamp(first.id) - due;
  // A timer fires a few real milliseconds late; in demo time that is `speed` times more.
  const tolerance = Math.max(2_000, 250 * world.speed);
  const timing =
    late < -1_000
      ? `${Math.round(-late / 1000)} s early`
      : late > tolerance
        ? `${Math.round(late / 1000)} s late`
        : "on time";
  return (
    `${mention.status} after reminder ${reminders.length}/${world.maxAttempts}, ` +
    `posted ${reminders.length === 1 ? "once" : `${reminders.length} times`}, ${timing}`
  );
}
