// Runs one script through the real a2aFlowMachine (with its real replyWait and pingPong children) on
// a scripted gateway that counts LLM calls, in the optimised configuration or in one of the two old
// behaviours: the "fixed 5 turns, always announce" and the old code's loop.
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
  REPLY_SKIP_TOKEN,
} from "../../src/policies/index.js";
import { flowSettings } from "../../src/runtime/flowService.js";
import type { AnnounceKind, Script } from "./scripts.js";

/**
 * `optimised`: the defaults. `fixed5`: the old behaviour, "fixed 5 turns, always announce"
 * (5 ping-pong steps for every message, whatever the tags or the replies, then the announce step).
 * `oldLoop`: the old code's loop (5 turns, 0 with a skip tag, stopped by REPLY_SKIP, always announce).
 */
export type Mode = "optimised" | "fixed5" | "oldLoop";

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
  /** Ping-pong steps the script had no reply for, answered with FIXED_FILL (the fixed5 run only). */
  filled: number;
}

/** The old loop's hard limit and its skip tags (its DEFAULT/MAX_PING_PONG_TURNS, shouldSkipPingPong). */
export const OLD_MAX_TURNS = 5;
export const OLD_SKIP_TAGS = /\[NO_REPLY_NEEDED\]|\[NOTIFICATION\]/i;

/** The old behaviour: exactly this many ping-pong steps for every conversation. */
export const FIXED_TURNS = 5;
/**
 * What the scripted gateway answers, in the fixed5 run only, for a turn the script has no reply for
 * (the scripts stop where the old loop or the optimised flow stops): the step is still an LLM call,
 * and an agent with nothing to add answers REPLY_SKIP, which the fixed loop does not stop on.
 */
export const FIXED_FILL = REPLY_SKIP_TOKEN;

const ANNOUNCE_CHANNEL = "1400000000000000500";
// Announcements are posted only in allowed channels; the one the scripts announce to is.
const DISCORD = { collaboration: { allowedChannels: [ANNOUNCE_CHANNEL] } };

/** The optimised flow: the defaults (maxPingPongTurns 5, autoTerminate true). */
export const OPTIMISED_CONFIG: A2AConfig = parseConfig({ discord: DISCORD });
/** Both old flows as far as the config can say it: 5 turns, no system early termination. */
export const OLD_CONFIG: A2AConfig = parseConfig({
  session: { agentToAgent: { maxPingPongTurns: OLD_MAX_TURNS, autoTerminate: false } },
  discord: DISCORD,
});

const T0 = 1_767_225_600_000;
const DISCORD_TARGET: AnnounceTarget = { channel: "discord", to: `channel:${ANNOUNCE_CHANNEL}` };

export const sessionOf = (agent: string) => `agent:${agent}:main`;

export function announceTargetOf(kind: AnnounceKind): AnnounceTarget | null {
  if (kind === "discord") return DISCORD_TARGET;
  if (kind === "internal") return { channel: "internal" };
  return null;
}

/**
 * The old loop's arithmetic, independent of the machines: one call for the message, then
 * `runAgentStep` per turn up to 5 unless the message carries a skip tag, breaking after an empty reply
 * or REPLY_SKIP (that step was still a call), then one announce call, always.
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

/** The old behaviour, counted plainly: 1 message + 5 ping-pong steps + 1 announce = 7 calls. */
export function fixedLoopCalls(): Calls {
  return { initial: 1, turns: FIXED_TURNS, announce: 1 };
}

/**
 * Gateway side effects answering from the script, counting every agent run, and checking that the
 * machine asks the right agent with the right message. A check that fails is recorded in `problems`
 * (the machines would swallow a rejected step as "no reply") and fails the benchmark. With `fill`
 * (the fixed5 run), a turn past the script's last reply answers `fill` instead of failing.
 */
function scriptedGateway(script: Script, problems: string[], fill?: string) {
  let now = T0;
  const tick = (ms: number) => (now += ms);
  const requester = sessionOf(script.from);
  const target = sessionOf(script.to);
  const calls: Calls = { initial: 0, turns: 0, announce: 0 };
  let posts = 0;
  let filled = 0;
  const replyAt = (turn: number): string | undefined => script.turns[turn - 1] ?? fill;
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
    // Turn 1 is the requester answering the target's first reply; then they alternate.
    const speaker = turn % 2 === 1 ? requester : target;
    if (input.sessionKey !== speaker)
      throw problem(`turn ${turn} ran as ${input.sessionKey}, not ${speaker}`);
    const heard = turn === 1 ? script.primary : replyAt(turn - 1);
    if (input.message !== heard) throw problem(`turn ${turn} was not given the previous reply`);
    const reply = replyAt(turn);
    if (reply === undefined) throw problem(`no scripted reply for turn ${turn}`);
    if (turn > script.turns.length) filled += 1;
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
    filled: () => filled,
    replyWait: replyWaitMachine.provide({ actors: { sendMessage, agentWait, readReply } }),
    agentStep,
    announceStep,
    postAnnouncement,
  };
}

/**
 * The old ping-pongs: the real pingPongMachine, but with the old turn count instead of the
 * intent-based one. No config or input of a2aFlowMachine turns the intent classification off, so this
 * wrapper stands in for its pingPong child and rewrites `effectiveTurns`: 5, or 0 for the old skip
 * tags (oldLoop); 5 always (fixed5). `autoTerminate: false` comes from the config. For fixed5 the
 * machine's two remaining stops, `explicitSkip` (REPLY_SKIP) and `noReply` (an empty reply), are also
 * provided as guards that never hold, so only the turn limit ends it: exactly 5 steps.
 */
function oldPingPong(
  agentStep: ReturnType<typeof scriptedGateway>["agentStep"],
  mode: Exclude<Mode, "optimised">,
) {
  const machine =
    mode === "fixed5"
      ? pingPongMachine.provide({
          actors: { agentStep },
          guards: { explicitSkip: () => false, noReply: () => false },
        })
      : pingPongMachine.provide({ actors: { agentStep } });
  const turnsFor = (message: string): number => {
    if (mode === "fixed5") return FIXED_TURNS;
    return OLD_SKIP_TAGS.test(message) ? 0 : OLD_MAX_TURNS;
  };
  return fromPromise<PingPongOutput, PingPongInput>(async ({ input }) => {
    const effectiveTurns = turnsFor(input.originalMessage);
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
  const gateway = scriptedGateway(script, problems, mode === "fixed5" ? FIXED_FILL : undefined);
  const config = mode === "optimised" ? OPTIMISED_CONFIG : OLD_CONFIG;
  const flow = a2aFlowMachine.provide({
    actors: {
      replyWait: gateway.replyWait,
      pingPong:
        mode === "optimised"
          ? pingPongMachine.provide({ actors: { agentStep: gateway.agentStep } })
          : (oldPingPong(gateway.agentStep, mode) as unknown as typeof pingPongMachine),
      announceStep: gateway.announceStep,
      postAnnouncement: gateway.postAnnouncement,
    },
  });
  // Both old flows announced after every conversation: give each one a channel so decideAnnounce runs it.
  const announce = mode === "optimised" ? (options.announce ?? script.announce) : "discord";
  // The input the runtime's sessionsSend builds (src/runtime/createA2ARuntime.ts).
  const input: A2AFlowInput = {
    conversationId: `conv-${script.id}`,
    routeKey: `${sessionOf(script.from)}:${sessionOf(script.to)}`,
    requesterSessionKey: sessionOf(script.from),
    targetSessionKey: sessionOf(script.to),
    message: script.message,
    skipPingPong: false,
    announceTarget: announceTargetOf(announce),
    ...flowSettings(config, script.to),
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
  return {
    calls,
    total: calls.initial + calls.turns + calls.announce,
    output,
    posts: gateway.posts(),
    filled: gateway.filled(),
  };
}
