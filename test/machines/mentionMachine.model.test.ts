import { describe, expect, it, vi } from "vitest";
import { type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, createActor } from "xstate";
import { getShortestPaths } from "xstate/graph";
import { type MentionContext } from "../../src/machines/index.js";
import { type MentionInput, mentionMachine } from "../../src/index.js";
import { IDS, MINUTE, stateOf, T0 } from "../support/discordFakes.js";
import { pending, sendRaw } from "../support/fakeActors.js";
import { exerciseModel } from "../support/modelBased.js";

const base: MentionInput = {
  mentionId: "collab-1",
  threadId: IDS.mentionThread,
  messageId: "1400000000000000200",
  fromAgentId: "ruda",
  targetAgentId: "eden",
  targetBotId: IDS.targetBot,
  originalText: "코드 리뷰 해줘",
  responseTimeoutMs: 5 * MINUTE,
  urgentResponseTimeoutMs: MINUTE,
  maxAttempts: 3,
  escalationMentionId: IDS.human,
  notifyOnFailure: true,
  sentAt: T0,
};

/** The machine as the graph functions see it: events are untyped there. */
const model: AnyStateMachine = mentionMachine;

const live = mentionMachine.provide({ actors: { postReminder: pending(), postEscalation: pending() } });

/** An `after` delay of a state of the mention, as XState delivers it when it is due. */
const after = (delay: "responseTimeout" | "retryDelay", state: string): AnyEventObject => ({
  type: `xstate.after.${delay}.mention.${state}`,
});

/**
 * Events that reach every guard of each live state: the timeout's delay; an answer from the target,
 * from another bot, from the human, and from the target before the mention was sent; a cancel; the
 * posts' done and error events: a 503 (retried up to three times, so the loop is finite) and, on a
 * post's first try, a 403 (never retried), for the first reminder and the escalation; the retry's delay.
 */
function eventsFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== "active") return [];
  const c = snapshot.context as MentionContext;
  const later = c.lastDeliveredAt + 30_000;
  const answers: AnyEventObject[] = [
    { type: "RESPONSE_RECEIVED", authorId: c.targetBotId, at: later, messageId: "reply-1" },
    { type: "RESPONSE_RECEIVED", authorId: IDS.otherBot, at: later },
    { type: "RESPONSE_RECEIVED", authorId: IDS.human, at: later },
    { type: "RESPONSE_RECEIVED", authorId: c.targetBotId, at: c.sentAt - 1 },
    { type: "CANCEL", at: later },
  ];
  const state = String(snapshot.value);
  if (snapshot.matches("pending") || snapshot.matches("reminded")) {
    return [after("responseTimeout", state), ...answers];
  }
  const firedAt = c.firedAt ?? Number.NaN;
  // To keep the graph small, posts fail only where they reach new edges: not for the urgent or the
  // unaddressed variants (the same edges), and a reminder only on the first one.
  const failing = !c.urgent && c.escalationMentionId !== undefined;
  const failures = (post: "postReminder" | "postEscalation"): AnyEventObject[] =>
    !failing || (post === "postReminder" && c.attempts > 1)
      ? []
      : [
          {
            type: `xstate.error.actor.${post}`,
            error: Object.assign(new Error("HTTP 503"), { status: 503 }),
          },
          ...((c.retries ?? 0) === 0
            ? [
                {
                  type: `xstate.error.actor.${post}`,
                  error: Object.assign(new Error("Missing Access"), { status: 403 }),
                },
              ]
            : []),
        ];
  if (snapshot.matches("reminding")) {
    return [
      {
        type: "xstate.done.actor.postReminder",
        output: { messageId: `reminder-${c.attempts}`, at: firedAt },
      },
      ...failures("postReminder"),
      ...answers,
    ];
  }
  if (snapshot.matches("escalating")) {
    return [
      { type: "xstate.done.actor.postEscalation", output: { messageId: "escalation", at: firedAt } },
      ...failures("postEscalation"),
      ...answers,
    ];
  }
  if (snapshot.matches("reminderRetrying") || snapshot.matches("escalationRetrying")) {
    return [after("retryDelay", state), ...answers];
  }
  return answers;
}

/**
 * Inputs that between them reach every guard: escalation from `pending` needs maxAttempts 1, the
 * `untimed` wait reminders off.
 */
const inputs: Array<[string, MentionInput]> = [
  ["defaults (3 attempts, notify)", base],
  ["urgent", { ...base, urgent: true }],
  ["maxAttempts 1", { ...base, maxAttempts: 1 }],
  ["maxAttempts 1, notifyOnFailure false", { ...base, maxAttempts: 1, notifyOnFailure: false }],
  ["notifyOnFailure false", { ...base, notifyOnFailure: false }],
  ["no escalationMentionId", { ...base, escalationMentionId: undefined }],
  ["reminders off", { ...base, enabled: false }],
];

describe("mentionMachine, enumerated", () => {
  it("fires every transition it defines over the inputs, and nothing it does not define", () => {
    const taken = new Set<string>();
    let defined = new Set<string>();
    const stats: Record<string, number> = {};
    for (const [label, input] of inputs) {
      const run = exerciseModel(mentionMachine, live, { input, events: eventsFor });
      defined = run.defined;
      stats[label] = run.paths;
      for (const key of run.taken) taken.add(key);
    }
    expect([...defined].filter((key) => !taken.has(key))).toEqual([]);
    expect([...taken].filter((key) => !defined.has(key))).toEqual([]);
    expect(defined.size).toBeGreaterThanOrEqual(17);
    expect(stats["defaults (3 attempts, notify)"]).toBeGreaterThan(40);
    // The guards that carry the lifecycle fired by name.
    for (const post of ["reminder", "escalation"]) {
      expect(taken).toContain(`mention.${post}Failing always [retryAllowed] → mention.${post}Retrying`);
      const next = post === "reminder" ? "reminding" : "escalating";
      expect(taken).toContain(
        `mention.${post}Retrying xstate.after.retryDelay.mention.${post}Retrying → mention.${next}`,
      );
    }
    for (const wait of ["pending", "reminded"]) {
      expect(taken).toContain(
        `mention.${wait} xstate.after.responseTimeout.mention.${wait} → mention.timedOut`,
      );
    }
    expect(taken).toContain("mention.reminderFailing always [notifiesOnFailure] → mention.escalating");
    expect(taken).toContain("mention RESPONSE_RECEIVED [targetAnswered] → mention.responded");
    expect(taken).toContain("mention.arming always [remindersOff] → mention.untimed");
    // Reminders off: the answer and a cancel are the only ways out; no timeout is ever armed.
    expect(stats["reminders off"]).toBeGreaterThan(0);
    console.info(
      `mentionMachine model: ${JSON.stringify(stats)} paths; ${defined.size} edges defined, ${taken.size} taken`,
    );
  });
});

/**
 * Events a live state must ignore: unknown types, another state's delay, and done events of posts that
 * are not running.
 */
function junkFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const c = snapshot.context as MentionContext;
  const due = c.lastDeliveredAt + c.responseTimeoutMs;
  const reminderDone = { type: "xstate.done.actor.postReminder", output: { messageId: "stale-r", at: due } };
  const escalationDone = {
    type: "xstate.done.actor.postEscalation",
    output: { messageId: "stale-e", at: due },
  };
  const common: AnyEventObject[] = [{ type: "NOPE" }];
  if (snapshot.matches("reminderRetrying") || snapshot.matches("escalationRetrying")) {
    return [...common, after("responseTimeout", "pending"), reminderDone, escalationDone];
  }
  if (snapshot.status !== "active") {
    return [
      ...common,
      after("responseTimeout", "pending"),
      { type: "RESPONSE_RECEIVED", authorId: c.targetBotId, at: due },
      { type: "CANCEL", at: due },
      reminderDone,
      escalationDone,
    ];
  }
  if (snapshot.matches("pending") || snapshot.matches("reminded")) {
    return [
      ...common,
      // The other waiting state's delay, and a retry's: stale, never this state's.
      after("responseTimeout", snapshot.matches("pending") ? "reminded" : "pending"),
      after("retryDelay", "reminderRetrying"),
      reminderDone,
      escalationDone,
    ];
  }
  const stray = snapshot.matches("reminding") ? escalationDone : reminderDone;
  // A post in flight: the waits' delays are stale.
  return [...common, after("responseTimeout", "reminded"), after("retryDelay", "reminderRetrying"), stray];
}

describe("mentionMachine, junk events", () => {
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
      expect(states).toBeGreaterThan(100);
      // XState's only complaint: events sent to a finished actor.
      for (const call of warn.mock.calls) expect(String(call[0])).toContain("stopped actor");
    } finally {
      warn.mockRestore();
    }
  });
});
