import { describe, expect, it, vi } from "vitest";
import { type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, createActor } from "xstate";
import { getShortestPaths } from "xstate/graph";
import { type CollaborateContext } from "../../src/machines/index.js";
import { type CollaborateInput, collaborateMachine, type mentionMachine } from "../../src/index.js";
import {
  discordApiError,
  httpError,
  IDS,
  MINUTE,
  rateLimitError,
  stateOf,
  T0,
} from "../support/discordFakes.js";
import { pending, sendRaw } from "../support/fakeActors.js";
import { exerciseModel, replayPath } from "../support/modelBased.js";

const base: CollaborateInput = {
  collaborationId: "collab-1",
  fromAgentId: "ruda",
  targetAgentId: "eden",
  fromName: "루다",
  toName: "이든",
  targetBotId: IDS.targetBot,
  message: "인증 모듈 코드 리뷰 해줘",
  channelId: IDS.channel,
  threadName: "인증 모듈 코드 리뷰",
  allowedChannels: [IDS.channel],
  maxMessageLength: 2000,
  mention: {
    responseTimeoutMs: 5 * MINUTE,
    urgentResponseTimeoutMs: MINUTE,
    maxAttempts: 3,
    escalationMentionId: IDS.human,
    notifyOnFailure: true,
  },
  startedAt: T0,
};

// The model does not simulate the invoked `mention` child, so the replayed one must be inert too:
// forwarded events reach a promise that never settles, and the child's done events come from the model.
const inertMention = pending() as unknown as typeof mentionMachine;
/** The machine as the graph functions see it: events are untyped there. */
const model: AnyStateMachine = collaborateMachine;

const live = collaborateMachine.provide({
  actors: {
    postStarter: pending(),
    createThread: pending(),
    postMention: pending(),
    postNotice: pending(),
    mention: inertMention,
  },
});

type DiscordCall = "postStarter" | "createThread" | "postMention" | "postNotice";

/** Every class of Discord failure (403, 404, 429, 5xx, other 4xx), stamped with the time it happened. */
function failures(actor: DiscordCall, at: number, everyClass: boolean): AnyEventObject[] {
  const type = `xstate.error.actor.${actor}`;
  const all = everyClass
    ? [
        discordApiError(403, at),
        discordApiError(404, at),
        rateLimitError(1_500, at),
        httpError(500, at),
        discordApiError(400, at),
      ]
    : [httpError(503, at)];
  return all.map((error) => ({ type, error }));
}

const STEP = 250;
/** Below the shortest retry wait (1 s): a flow whose last change is this recent has retried nothing yet. */
const UNRETRIED = 1_000;

/**
 * A Discord call's success, and its failures: to keep the graph small, every failure class while no
 * step of the flow has needed a retry, a 500 alone on a retry, and none on a later step of a flow that
 * was retried.
 */
function discordCall(c: CollaborateContext, call: DiscordCall, success: object): AnyEventObject[] {
  const at = c.lastAt + STEP;
  const firstTry = c.retries === 0 && c.lastAt - c.startedAt < UNRETRIED;
  return [
    { type: `xstate.done.actor.${call}`, output: { ...success, at } },
    ...(firstTry || c.retries > 0 ? failures(call, at, firstTry) : []),
  ];
}

/**
 * Events that reach every guard: each Discord call's success and its failures (see discordCall),
 * the retry's delay, the events forwarded to the mention, and the mention's three outcomes.
 */
function eventsFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== "active") return [];
  const c = snapshot.context as CollaborateContext;
  if (snapshot.matches("postingStarter")) {
    return discordCall(c, "postStarter", { messageId: IDS.newThread });
  }
  if (snapshot.matches("creatingThread")) {
    return discordCall(c, "createThread", { threadId: IDS.newThread });
  }
  if (snapshot.matches("sending")) {
    return discordCall(c, "postMention", { messageId: "1400000000000000300" });
  }
  if (snapshot.matches("postingNotice")) {
    return discordCall(c, "postNotice", { messageId: "1400000000000000400" });
  }
  if (snapshot.matches("retrying") || snapshot.matches("noticeRetrying")) {
    return [{ type: `xstate.after.retryDelay.collaborate.${String(snapshot.value)}` }];
  }
  if (snapshot.matches("awaitingResponse")) {
    const sentAt = c.sentAt ?? Number.NaN;
    const done = (output: object) => ({ type: "xstate.done.actor.mention", output });
    return [
      { type: "RESPONSE_RECEIVED", authorId: IDS.targetBot, at: sentAt + MINUTE },
      { type: "CANCEL", at: sentAt + MINUTE },
      done({ status: "responded", attempts: 2, respondedAt: sentAt + 7 * MINUTE }),
      done({ status: "escalated", attempts: 3 }),
      done({ status: "cancelled", attempts: 1 }),
    ];
  }
  return [];
}

const { targetBotId: _unknown, ...withoutTarget } = base;
/** One input per validation outcome and per thread mode: validation and thread resolution are eventless. */
const inputs: Array<[string, CollaborateInput]> = [
  ["new thread", base],
  ["explicit thread", { ...base, threadId: IDS.explicitThread, threadParentId: IDS.channel }],
  ["explicit thread, parent unknown", { ...base, channelId: undefined, threadId: IDS.explicitThread }],
  ["reusable thread", { ...base, reusableThread: { threadId: IDS.reusedThread, channelId: IDS.channel } }],
  // A 403/404 then posts a failure notice in the default channel.
  [
    "explicit thread, escalation channel",
    { ...base, threadId: IDS.explicitThread, threadParentId: IDS.channel, defaultChannel: IDS.channel },
  ],
  [
    "explicit thread Discord does not know (404 on its lookup)",
    {
      ...base,
      threadId: IDS.explicitThread,
      defaultChannel: IDS.channel,
      threadLookupFailure: {
        kind: "not_found",
        retryable: false,
        escalate: true,
        message: "Unknown Channel",
      },
    },
  ],
  ["unknown_agent", withoutTarget],
  ["empty_message", { ...base, message: " \n\t " }],
  ["message_too_long", { ...base, message: "a".repeat(1_990) }],
  ["channel_not_allowed", { ...base, channelId: IDS.otherChannel, defaultChannel: IDS.channel }],
  ["loop_guard", { ...base, loopGuard: { allowed: false } }],
  ["reply_in_thread", { ...base, replyInThread: true }],
];

describe("collaborateMachine, enumerated", () => {
  it("fires every transition it defines over the inputs, and nothing it does not define", () => {
    const taken = new Set<string>();
    let defined = new Set<string>();
    const stats: Record<string, number> = {};
    for (const [label, input] of inputs) {
      const run = exerciseModel(collaborateMachine, live, { input, events: eventsFor });
      defined = run.defined;
      stats[label] = run.paths;
      for (const key of run.taken) taken.add(key);
      // A rejected input starts final: no edge to explore, but its eventless validation ran.
      for (const key of replayPath(live, input, [])) taken.add(key);
    }
    expect([...defined].filter((key) => !taken.has(key))).toEqual([]);
    expect([...taken].filter((key) => !defined.has(key))).toEqual([]);
    expect(stats["new thread"]).toBeGreaterThan(50);
    for (const [guard, step] of [
      ["threadKnown", "sending"],
      ["starterPosted", "creatingThread"],
      [undefined, "postingStarter"],
    ]) {
      const after = guard === undefined ? "" : ` [${guard}]`;
      expect(taken).toContain(
        `collaborate.retrying xstate.after.retryDelay.collaborate.retrying${after} → collaborate.${step}`,
      );
    }
    expect(taken).toContain("collaborate.failing always [retryAllowed] → collaborate.retrying");
    expect(taken).toContain(
      "collaborate.failing always [and(escalatingFailure, noticeWanted)] → collaborate.postingNotice",
    );
    expect(taken).toContain(
      "collaborate.noticeRetrying xstate.after.retryDelay.collaborate.noticeRetrying → collaborate.postingNotice",
    );
    console.info(
      `collaborateMachine model: ${JSON.stringify(stats)} paths; ${defined.size} edges defined, ${taken.size} taken`,
    );
  });
});

/**
 * Events a state must ignore: unknown types, another state's retry delay, the mention's own delay (never
 * forwarded), mention events before the mention is sent, and done events of Discord calls or a mention
 * that are not running.
 */
function junkFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const c = snapshot.context as CollaborateContext;
  const at = c.lastAt + 1_000;
  const nope = { type: "NOPE" };
  const otherRetry = snapshot.matches("noticeRetrying") ? "retrying" : "noticeRetrying";
  const retryDue = { type: `xstate.after.retryDelay.collaborate.${otherRetry}` };
  const timeout = { type: "xstate.after.responseTimeout.mention.pending" };
  const answer = { type: "RESPONSE_RECEIVED", authorId: IDS.targetBot, at };
  const starterDone = { type: "xstate.done.actor.postStarter", output: { messageId: "stale-starter", at } };
  const threadDone = { type: "xstate.done.actor.createThread", output: { threadId: "stale-thread", at } };
  const postDone = { type: "xstate.done.actor.postMention", output: { messageId: "stale-message", at } };
  const mentionDone = {
    type: "xstate.done.actor.mention",
    output: { status: "responded", attempts: 1, respondedAt: at },
  };
  const noticeDone = { type: "xstate.done.actor.postNotice", output: { messageId: "stale-notice", at } };
  const common = [nope, timeout, answer, mentionDone];
  if (snapshot.status !== "active") {
    return [...common, retryDue, starterDone, threadDone, postDone, noticeDone];
  }
  if (snapshot.matches("postingStarter")) return [...common, retryDue, threadDone, postDone, noticeDone];
  if (snapshot.matches("creatingThread")) return [...common, retryDue, starterDone, postDone, noticeDone];
  if (snapshot.matches("sending")) return [...common, retryDue, starterDone, threadDone, noticeDone];
  if (snapshot.matches("postingNotice")) return [...common, retryDue, starterDone, threadDone, postDone];
  if (snapshot.matches("retrying") || snapshot.matches("noticeRetrying")) {
    return [...common, retryDue, starterDone, threadDone, postDone, noticeDone];
  }
  return [nope, starterDone, threadDone, postDone, noticeDone];
}

describe("collaborateMachine, junk events", () => {
  it("leave value and context unchanged in every reachable state", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      let states = 0;
      for (const [label, input] of inputs) {
        for (const path of getShortestPaths(model, { input, events: eventsFor, limit: 5_000 })) {
          const actor = createActor(live, { input });
          actor.start();
          for (const step of path.steps.slice(1)) sendRaw(actor, step.event);
          expect(stateOf(actor)).toEqual({ value: path.state.value, context: path.state.context });
          const status = actor.getSnapshot().status;
          for (const junk of junkFor(actor.getSnapshot())) {
            const before = stateOf(actor);
            sendRaw(actor, junk);
            expect(
              stateOf(actor),
              `${label}, ${JSON.stringify(before.value)} + ${JSON.stringify(junk)}`,
            ).toEqual(before);
            expect(actor.getSnapshot().status).toBe(status);
          }
          actor.stop();
          states++;
        }
      }
      expect(states).toBeGreaterThan(50);
      for (const call of warn.mock.calls) expect(String(call[0])).toContain("stopped actor");
    } finally {
      warn.mockRestore();
    }
  });
});
