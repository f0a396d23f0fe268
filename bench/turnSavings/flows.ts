// Runs one script through the real a2aFlowMachine (with its real replyWait and pingPong children) on
// a scripted gateway that counts LLM calls, in the optimised configuration or in the old behaviour.
import { type AnyMachineSnapshot, createActor, fromPromise, toPromise } from "xstate";
import {
  type A2AFlowInput,
  type A2AFlowOutput,
  type AgentStepInput,
  type AgentStepOutput,
  type AgentWaitInput,
  type AgentWaitOutput,
  a2aFlowMachine,
  type PingPongInput,
  type PingPongOutput,
  type PostAnnouncementInput,
  type PostAnnouncementOutput,
  pingPongMachine,
  type ReadReplyInput,
  type ReadReplyOutput,
  replyWaitMachine,
  type SendMessageInput,
  type SendMessageOutput,
} from "../../src/machines/index.js";
import {
  type A2AConfig,
  ANNOUNCE_SKIP_TOKEN,
  type AnnounceTarget,
  isReplySkip,
  parseConfig,
  resolveAgentA2ASettings,
} from "../../src/services/index.js";
import type { AnnounceKind, Script } from "./scripts.js";

export type Mode = "optimised" | "old";

/** LLM calls by kind: every agent run is one call. */
export interface Calls {
  /** The initial request: each `agent` run of the message (sendMessage; a retry that resends counts again). */
  initial: number;
  /** Ping-pong steps (agentStep), the one that ended the conversation included. */
  turns: number;
  /** The announce step (announceStep), whatever it answered. */
  announce: number;
}

export interface FlowRun {
  calls: Calls;
  total: number;
  output: A2AFlowOutput;
  /** Announcements posted to a channel (not an LLM call). */
  posts: number;
}

/** The old loop's hard limit and its skip tags (design 001 §1.2: DEFAULT/MAX_PING_PONG_TURNS, shouldSkipPingPong). */
export const OLD_MAX_TURNS = 5;
export const OLD_SKIP_TAGS = /\[NO_REPLY_NEEDED\]|\[NOTIFICATION\]/i;

/** The optimised flow: the defaults (maxPingPongTurns 5, autoTerminate true). */
export const OPTIMISED_CONFIG: A2AConfig = parseConfig({});
/** The old flow as far as the config can say it: 5 turns, no system early termination. */
export const OLD_CONFIG: A2AConfig = parseConfig({
  session: { agentToAgent: { maxPingPongTurns: OLD_MAX_TURNS, autoTerminate: false } },
});

const T0 = 1_767_225_600_000;
const DISCORD_TARGET: AnnounceTarget = { channel: "discord", to: "channel:1400000000000000500" };

export const sessionOf = (agent: string) => `agent:${agent}:main`;

export function announceTargetOf(kind: AnnounceKind): AnnounceTarget | null {
  if (kind === "discord") return DISCORD_TARGET;
  if (kind === "internal") return { channel: "internal" };
  return null;
}

/**
 * The old loop's arithmetic, independent of the machines (design 001 §1.2): one call for the
 * message, then `runAgentStep` per turn up to 5 unless the message carries a skip tag, breaking after
 * an empty reply or REPLY_SKIP (that step was still a call), then one announce call, always.
 */
export function oldLoopCalls(script: Script): Calls {
  let turns = 0;
  if (!OLD_SKIP_TAGS.test(script.message)) {
    for (let turn = 1; turn <= OLD_MAX_TURNS; turn += 1) {
      const reply = script.turns[turn - 1];
      if (reply === undefined) throw new Error(`${script.id}: the old loop needs a reply for turn ${turn}`);
      turns = turn;
      if (!reply.trim() || isReplySkip(reply)) break;
    }
  }
  return { initial: 1, turns, announce: 1 };
}

/**
 * Gateway side effects answering from the script, counting every agent run, and checking that the
 * machine asks the right agent with the right message. A check that fails is recorded in `problems`
 * (the machines would swallow a rejected step as "no reply") and fails the benchmark.
 */
function scriptedGateway(script: Script, problems: string[]) {
  let now = T0;
  const tick = (ms: number) => (now += ms);
  const requester = sessionOf(script.from);
  const target = sessionOf(script.to);
  const calls: Calls = { initial: 0, turns: 0, announce: 0 };
  let posts = 0;
  const problem = (message: string) => {
    problems.push(`${script.id}: ${message}`);
    return new Error(message);
  };
  const sendMessage = fromPromise<SendMessageOutput, SendMessageInput>(async ({ input }) => {
    calls.initial += 1;
    if (input.sessionKey !== target) throw problem(`message sent to ${input.sessionKey}, not ${target}`);
    if (input.message !== script.message) throw problem("the message sent is not the script's");
    return { runId: `${script.id}-run-${calls.initial}`, at: tick(200) };
  });
  const agentWait = fromPromise<AgentWaitOutput, AgentWaitInput>(async () => ({
    status: "ok",
    waitedMs: 3_000,
    at: tick(3_000),
  }));
  const readReply = fromPromise<ReadReplyOutput, ReadReplyInput>(async ({ input }) => {
    if (input.sessionKey !== target) throw problem(`reply read from ${input.sessionKey}, not ${target}`);
    return { reply: script.primary, at: tick(50) };
  });
  const agentStep = fromPromise<AgentStepOutput, AgentStepInput>(async ({ input }) => {
    calls.turns += 1;
    const turn = calls.turns;
    // Turn 1 is the requester answering the target's first reply; then they alternate (design 001 §1.1).
    const speaker = turn % 2 === 1 ? requester : target;
    if (input.sessionKey !== speaker)
      throw problem(`turn ${turn} ran as ${input.sessionKey}, not ${speaker}`);
    const heard = turn === 1 ? script.primary : script.turns[turn - 2];
    if (input.message !== heard) throw problem(`turn ${turn} was not given the previous reply`);
    const reply = script.turns[turn - 1];
    if (reply === undefined) throw problem(`no scripted reply for turn ${turn}`);
    return { reply, at: tick(4_000) };
  });
  const announceStep = fromPromise<AgentStepOutput, AgentStepInput>(async ({ input }) => {
    calls.announce += 1;
    if (input.sessionKey !== target) throw problem(`announce ran as ${input.sessionKey}, not ${target}`);
    return { reply: script.announceReply ?? ANNOUNCE_SKIP_TOKEN, at: tick(4_000) };
  });
  const postAnnouncement = fromPromise<PostAnnouncementOutput, PostAnnouncementInput>(async () => {
    posts += 1;
    return { at: tick(300) };
  });
  return {
    calls,
    posts: () => posts,
    replyWait: replyWaitMachine.provide({ actors: { sendMessage, agentWait, readReply } }),
    agentStep,
    announceStep,
    postAnnouncement,
  };
}

/**
 * The old ping-pong: the real pingPongMachine, but with the old turn count (5, or 0 for the old skip
 * tags) instead of the intent-based one. No config or input of a2aFlowMachine turns the intent
 * classification off, so this wrapper stands in for its pingPong child and only rewrites
 * `effectiveTurns`; `autoTerminate: false` comes from the config.
 */
function oldPingPong(agentStep: ReturnType<typeof scriptedGateway>["agentStep"]) {
  const machine = pingPongMachine.provide({ actors: { agentStep } });
  return fromPromise<PingPongOutput, PingPongInput>(async ({ input }) => {
    const effectiveTurns = OLD_SKIP_TAGS.test(input.originalMessage) ? 0 : OLD_MAX_TURNS;
    const child = createActor(machine, { input: { ...input, effectiveTurns } });
    child.start();
    return toPromise(child);
  });
}

export interface RunOptions {
  /** Overrides the script's announce target (the sensitivity run gives every conversation a channel). */
  announce?: AnnounceKind;
}

/** Runs one script to the end of its flow and returns what it cost. Throws on anything unexpected. */
export async function runScript(script: Script, mode: Mode, options: RunOptions = {}): Promise<FlowRun> {
  const problems: string[] = [];
  const gateway = scriptedGateway(script, problems);
  const config = mode === "old" ? OLD_CONFIG : OPTIMISED_CONFIG;
  const a2a = config.session.agentToAgent;
  const settings = resolveAgentA2ASettings(config, script.to);
  const flow = a2aFlowMachine.provide({
    actors: {
      replyWait: gateway.replyWait,
      pingPong:
        mode === "old"
          ? (oldPingPong(gateway.agentStep) as unknown as typeof pingPongMachine)
          : pingPongMachine.provide({ actors: { agentStep: gateway.agentStep } }),
      announceStep: gateway.announceStep,
      postAnnouncement: gateway.postAnnouncement,
    },
  });
  // The old flow announced after every conversation: give each one a channel so decideAnnounce runs it.
  const announce = mode === "old" ? "discord" : (options.announce ?? script.announce);
  // The input the runtime's sessionsSend builds (src/runtime/createA2ARuntime.ts).
  const input: A2AFlowInput = {
    conversationId: `conv-${script.id}`,
    routeKey: `${sessionOf(script.from)}:${sessionOf(script.to)}`,
    requesterSessionKey: sessionOf(script.from),
    targetSessionKey: sessionOf(script.to),
    message: script.message,
    skipPingPong: false,
    announceTarget: announceTargetOf(announce),
    configuredMaxTurns: settings.maxPingPongTurns,
    autoTerminate: a2a.autoTerminate,
    retry: {
      enabled: a2a.retry.enabled,
      baseBackoffMs: a2a.retry.baseBackoffMs,
      maxBackoffMs: a2a.retry.maxBackoffMs,
    },
    maxWaitMs: settings.maxWaitMs,
    chunkMs: settings.chunkMs,
    idempotencyKey: `flow-${script.id}-${mode}`,
    seed: 7,
    mode: "async",
    fromAgent: script.from,
    toAgent: script.to,
    startedAt: T0,
  };
  const actor = createActor(flow, { input });
  let failure: unknown;
  actor.subscribe({ error: (error) => (failure = error) });
  actor.start();
  // Every side effect settles at once; a flow still active after this many turns of the event loop
  // waits for something the script does not give (a timer, say), which these scripts never need.
  for (let round = 0; round < 200 && actor.getSnapshot().status === "active"; round += 1) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
  actor.stop();
  if (failure !== undefined) throw new Error(`${script.id} (${mode}): the flow failed: ${String(failure)}`);
  if (snapshot.status !== "done") {
    throw new Error(
      `${script.id} (${mode}): the flow did not finish (state ${JSON.stringify(snapshot.value)})`,
    );
  }
  if (problems.length > 0) throw new Error(`${script.id} (${mode}): ${problems.join("; ")}`);
  const output = snapshot.output as A2AFlowOutput;
  if (output.status !== "ok") throw new Error(`${script.id} (${mode}): the flow ended ${output.status}`);
  const calls = { ...gateway.calls };
  return { calls, total: calls.initial + calls.turns + calls.announce, output, posts: gateway.posts() };
}
