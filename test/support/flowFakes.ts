import {
  type AnyActorRef,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  createActor,
  fromPromise,
  type InspectionEvent,
} from "xstate";
import {
  type A2AEvent,
  A2AEventSchema,
  a2aFlowMachine,
  pingPongMachine,
  replyWaitMachine,
} from "../../src/index.js";
import {
  type AgentStepError,
  type AgentStepInput,
  type AgentStepOutput,
  type AgentWaitInput,
  type AgentWaitOutput,
  type PostAnnouncementInput,
  type PostAnnouncementOutput,
  type ReadReplyInput,
  type ReadReplyOutput,
  type SendMessageInput,
  type SendMessageOutput,
} from "../../src/machines/index.js";
import { postRetryWaitMs } from "../../src/machines/flowRetry.js";
import { VirtualClock } from "../../src/testing/index.js";
import { pending } from "./fakeActors.js";
import { edgeCoveringPaths, type ModelOptions } from "./modelBased.js";

// Fakes and drivers for the flow statecharts (replyWait, pingPong, a2aFlow): scripted gateway side
// effects on a fake clock, an emitted-event collector that hears every actor of a tree, and a walker
// over every reachable state of a machine's model.

/** Lets every promise that is already settled (and every chain hanging off it) run: no timers involved. */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** An event some actor emitted, as heard. */
export type Emitted = { type: string } & Record<string, unknown>;

/** Collects what every actor of a tree emits (children emit on themselves), in emission order. */
export function eventCollector() {
  const events: Emitted[] = [];
  const inspect = (ev: InspectionEvent) => {
    if (ev.type === "@xstate.actor") {
      (ev.actorRef as AnyActorRef).on("*", (emitted: Emitted) => events.push(emitted));
    }
  };
  return {
    events,
    inspect,
    types: () => events.map((e) => e.type),
    ofType: (type: string) => events.filter((e) => e.type === type),
    /** Every event parsed with the public schema (throws on the first that does not parse). */
    parsed: (): A2AEvent[] => events.map((e) => A2AEventSchema.parse(e)),
  };
}

/** A scripted call that never settles (the process "dies" while it runs). */
export const NEVER = Symbol("never settles");
/** What one scripted agentWait call answers: a status, a gateway failure, or nothing ever. */
export type WaitScript = Omit<AgentWaitOutput, "at"> | Error | typeof NEVER;
/**
 * What one scripted agent step answers: a reply, no reply (`undefined`), a failed step as the runtime
 * reports it (`{ error }`), a rejection, or nothing ever.
 */
export type StepScript = string | undefined | { error: AgentStepError } | Error | typeof NEVER;

export interface GatewayScript {
  /** agentWait answers in call order; a timeout takes the requested chunk unless `waitedMs` says otherwise. */
  waits?: WaitScript[];
  /** What readLatestAssistantReply returns after an `ok` wait. */
  reply?: string;
  /** Ping-pong step answers in call order. */
  steps?: StepScript[];
  /** The announce step's answer; a list answers the announce step's runs in order. */
  announce?: StepScript | StepScript[];
  /** Makes postAnnouncement fail. */
  postFails?: boolean;
  /** What the posts of the announcement throw, in order, before one succeeds. */
  postFailures?: unknown[];
  /** The fake clock's start (epoch ms). */
  startAt?: number;
}

/**
 * Gateway side effects that answer from a script and record every call. Each completes at once on a
 * fake clock that advances by what the call would take, and stamps its output with that time.
 */
export function scriptedGateway(script: GatewayScript = {}) {
  // Also XState's clock for the actors' `after` delays: a delay fires when the time reaches it.
  const clock = new VirtualClock(script.startAt ?? 1_700_000_000_000);
  const tick = (ms: number) => {
    clock.moveTo(clock.now() + ms);
    return clock.now();
  };
  const waits = [...(script.waits ?? [])];
  const steps = [...(script.steps ?? [])];
  const announces = Array.isArray(script.announce) ? [...script.announce] : undefined;
  const postFailures = [...(script.postFailures ?? [])];
  const calls = {
    sendMessage: [] as SendMessageInput[],
    agentWait: [] as AgentWaitInput[],
    readReply: [] as ReadReplyInput[],
    agentStep: [] as AgentStepInput[],
    announceStep: [] as AgentStepInput[],
    postAnnouncement: [] as PostAnnouncementInput[],
  };
  const step = (answer: StepScript): Promise<AgentStepOutput> => {
    if (answer === NEVER) return new Promise<never>(() => {});
    const at = tick(1_000);
    // The runtime's actors stamp the errors they reject with the time they failed.
    if (answer instanceof Error) return Promise.reject(Object.assign(answer, { at }));
    if (typeof answer === "object") return Promise.resolve({ error: answer.error, at });
    return Promise.resolve(answer === undefined ? { at } : { reply: answer, at });
  };
  const actors = {
    sendMessage: fromPromise<SendMessageOutput, SendMessageInput>(async ({ input }) => {
      calls.sendMessage.push(input);
      return { runId: `run-${calls.sendMessage.length}`, at: tick(100) };
    }),
    agentWait: fromPromise<AgentWaitOutput, AgentWaitInput>(async ({ input }) => {
      calls.agentWait.push(input);
      const next = waits.shift();
      if (next === undefined) throw new Error(`unscripted agentWait call #${calls.agentWait.length}`);
      if (next === NEVER) return new Promise<never>(() => {});
      if (next instanceof Error) {
        // The runtime's actors stamp the errors they reject with the time they failed.
        throw Object.assign(next, { at: tick(10) });
      }
      const waitedMs = next.waitedMs ?? (next.status === "timeout" ? input.timeoutMs : 500);
      return { ...next, waitedMs, at: tick(waitedMs) };
    }),
    readReply: fromPromise<ReadReplyOutput, ReadReplyInput>(async ({ input }) => {
      calls.readReply.push(input);
      const at = tick(50);
      return script.reply === undefined ? { at } : { reply: script.reply, at };
    }),
    agentStep: fromPromise<AgentStepOutput, AgentStepInput>(({ input }) => {
      calls.agentStep.push(input);
      if (steps.length === 0)
        return Promise.reject(new Error(`unscripted agent step #${calls.agentStep.length}`));
      return step(steps.shift());
    }),
    announceStep: fromPromise<AgentStepOutput, AgentStepInput>(({ input }) => {
      calls.announceStep.push(input);
      return step(announces === undefined ? (script.announce as StepScript) : announces.shift());
    }),
    postAnnouncement: fromPromise<PostAnnouncementOutput, PostAnnouncementInput>(async ({ input }) => {
      calls.postAnnouncement.push(input);
      const at = tick(100);
      // The runtime's actors stamp the errors they reject with the time they failed.
      if (script.postFails === true) throw Object.assign(new Error("Missing Permissions"), { at });
      if (postFailures.length > 0) throw Object.assign(postFailures.shift() as object, { at });
      return { at };
    }),
  };
  const pingPong = pingPongMachine.provide({ actors: { agentStep: actors.agentStep } });
  const flow = a2aFlowMachine.provide({
    actors: {
      replyWait: replyWaitMachine.provide({
        actors: { sendMessage: actors.sendMessage, agentWait: actors.agentWait, readReply: actors.readReply },
      }),
      pingPong,
      announceStep: actors.announceStep,
      postAnnouncement: actors.postAnnouncement,
    },
  });
  return {
    calls,
    actors,
    /** XState's clock for the actors: it moves with the fake clock and fires the delays due by then. */
    clock,
    /** pingPongMachine with the scripted agent step. */
    pingPong,
    /** a2aFlowMachine with every child and side effect scripted. */
    flow,
    now: clock.now,
    /** Moves the fake clock, as the runtime's clock moves while a timer is pending. */
    setNow: (at: number) => {
      clock.moveTo(Math.max(clock.now(), at));
    },
  };
}

export type GatewayFakes = ReturnType<typeof scriptedGateway>;

/**
 * a2aFlowMachine whose children never settle on their own: model-based replays send their done and
 * error events. The reply-wait and ping-pong children are machines; a never-settling promise stands
 * in for each (events forwarded to it are ignored).
 */
export function pendingChildrenFlow() {
  return a2aFlowMachine.provide({
    actors: {
      replyWait: pending() as unknown as typeof replyWaitMachine,
      pingPong: pending() as unknown as typeof pingPongMachine,
      announceStep: pending(),
      postAnnouncement: pending(),
    },
  });
}

/** The event XState delivers to the reply-wait child when its backoff (`after: { backoffDelay }`) is over. */
export const BACKOFF_OVER = "xstate.after.backoffDelay.replyWait.retrying";

/** An `after` delay a flow tree waits for; `to` is the actor it goes to. */
export type FlowTimer = { event: string; at: number; to: AnyActorRef };

/** The reply-wait child's backoff, if it is in one: when it ends (`at`) and the event that ends it. */
export function replyWaitDue(flow: AnyActorRef): FlowTimer | undefined {
  const child = (flow.getSnapshot() as AnyMachineSnapshot).children["replyWait"] as AnyActorRef | undefined;
  return child === undefined ? undefined : ownTimer(child);
}

type TimedContext = Parameters<typeof postRetryWaitMs>[0] & {
  lastAt?: number;
  backoffMs?: number;
};

/**
 * The `after` waits of the flow statecharts: machine id and state, the delay's name, and how long it
 * waits from `lastAt` (when the failure was seen, which is when the state was entered).
 */
const AFTER_WAITS: Array<{ machine: string; state: string; delay: string; ms: (c: TimedContext) => number }> =
  [
    { machine: "replyWait", state: "retrying", delay: "backoffDelay", ms: (c) => c.backoffMs ?? 0 },
    { machine: "pingPong", state: "retrying", delay: "backoffDelay", ms: (c) => c.backoffMs ?? 0 },
    { machine: "a2aFlow", state: "announceRetrying", delay: "backoffDelay", ms: (c) => c.backoffMs ?? 0 },
    { machine: "a2aFlow", state: "postRetrying", delay: "retryDelay", ms: postRetryWaitMs },
  ];

function ownTimer(actor: AnyActorRef): FlowTimer | undefined {
  const snapshot = actor.getSnapshot() as {
    value?: unknown;
    machine?: { id?: string };
    context?: TimedContext;
  };
  const context = snapshot.context;
  const id = snapshot.machine?.id;
  const wait = AFTER_WAITS.find((w) => w.machine === id && w.state === snapshot.value);
  if (wait === undefined || context?.lastAt === undefined) return undefined;
  const event = `xstate.after.${wait.delay}.${wait.machine}.${wait.state}`;
  return { event, at: context.lastAt + wait.ms(context), to: actor };
}

/** The `after` delay the flow or any of its children waits for. */
export function flowDue(actor: AnyActorRef): FlowTimer | undefined {
  const snapshot = actor.getSnapshot() as {
    status?: string;
    children?: Record<string, AnyActorRef | undefined>;
  };
  if (snapshot.status !== "active") return undefined;
  const own = ownTimer(actor);
  if (own !== undefined) return own;
  for (const child of Object.values(snapshot.children ?? {})) {
    const due = child === undefined ? undefined : flowDue(child);
    if (due !== undefined) return due;
  }
  return undefined;
}

/**
 * Drives a flow as the runtime would: lets side effects settle and, while the flow or a child waits
 * for a delay, moves the fake clock to its due time. The delay fires on its own when the flow runs on `gateway.clock` (so a delay that is not due then does not
 * fire); on another clock it is sent to the actor that waits. Returns how many timers came due.
 */
export async function driveFlow(flow: AnyActorRef, gateway: GatewayFakes, maxTimers = 20): Promise<number> {
  let delivered = 0;
  for (;;) {
    await flush();
    if ((flow.getSnapshot() as AnyMachineSnapshot).status !== "active") return delivered;
    const due = flowDue(flow);
    if (due === undefined || delivered >= maxTimers) return delivered;
    gateway.setNow(due.at);
    if ((due.to as { clock?: unknown }).clock !== gateway.clock) due.to.send({ type: due.event });
    delivered += 1;
  }
}

/** The part of a snapshot junk must not touch. */
export function valueAndContext(snapshot: AnyMachineSnapshot) {
  return { value: snapshot.value, context: snapshot.context as unknown };
}

/**
 * Replays the model's edge-covering paths against live actors (side effects that never settle) and
 * calls `visit` once in every distinct reachable state (value + context). Returns the states visited.
 */
export function forEachReachableState(
  machine: AnyStateMachine,
  live: AnyStateMachine,
  options: ModelOptions,
  visit: (actor: AnyActorRef, snapshot: AnyMachineSnapshot) => void,
): number {
  const seen = new Set<string>();
  const visitOnce = (actor: AnyActorRef) => {
    const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
    const key = JSON.stringify(valueAndContext(snapshot));
    if (seen.has(key)) return;
    seen.add(key);
    visit(actor, snapshot);
  };
  const paths = edgeCoveringPaths(machine, options);
  for (const path of [[], ...paths]) {
    const actor = createActor(live, { input: options.input }).start();
    visitOnce(actor);
    for (const step of path) {
      actor.send(step.event as AnyEventObject);
      visitOnce(actor);
    }
    actor.stop();
  }
  return seen.size;
}
