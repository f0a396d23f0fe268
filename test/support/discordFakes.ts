import { DiscordAPIError, HTTPError, RateLimitError } from "discord.js";
import {
  type AnyActorRef,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  createActor,
  fromPromise,
  type InspectionEvent,
} from "xstate";
import { type A2AEvent, A2AEventSchema, collaborateMachine, mentionMachine } from "../../src/index.js";
import { renderCollaborationText } from "../../src/policies/index.js";
import type { VirtualClock } from "../../src/testing/index.js";
import {
  type CreateThreadInput,
  type CreateThreadOutput,
  type PostMessageInput,
  type PostMessageOutput,
} from "../../src/machines/index.js";

// Fakes of the Discord side effects the mention and collaborate machines invoke, errors shaped as
// discord.js throws them, and a collector of everything a system of actors emits.

/** Epoch ms of the scenarios' original mention: 2026-02-26 09:00 UTC. */
export const T0 = Date.UTC(2026, 1, 26, 9, 0, 0);
export const SECOND = 1_000;
export const MINUTE = 60_000;

/** Snowflake-shaped ids (17–19 digits), as Discord gives them. */
export const IDS = {
  /** The target agent's (이든's) bot. */
  targetBot: "1400000000000000001",
  /** Another agent's bot, neither requester nor target. */
  otherBot: "1400000000000000002",
  /** 병욱, the human `escalationMentionId` names. */
  human: "974537452750528553",
  channel: "1400000000000000010",
  otherChannel: "1400000000000000011",
  explicitThread: "1400000000000000100",
  reusedThread: "1400000000000000101",
  newThread: "1400000000000000102",
  mentionThread: "1400000000000000103",
} as const;

/** What a scripted fake does on one call: answer with an output, reject with an error, or never settle. */
export type Answer<O> = { ok: O } | { fail: unknown } | "hang";

/**
 * A fake side-effect actor that records each input and answers as `answer` decides for that call
 * (1-based). Answers are computed when the actor starts, so a test can read its own clock there.
 */
export function scripted<I, O, R = I>(
  answer: (input: R, call: number) => Answer<O>,
  view: (input: I) => R = (input) => input as unknown as R,
) {
  const inputs: R[] = [];
  const logic = fromPromise<O, I>(({ input }) => {
    const seen = view(input);
    inputs.push(seen);
    const a = answer(seen, inputs.length);
    if (a === "hang") return new Promise<never>(() => {});
    if ("fail" in a) return Promise.reject(a.fail);
    return Promise.resolve(a.ok);
  });
  return { logic, inputs };
}

/** A post as the fakes record it: with the text the runtime would post in the default language. */
export type RecordedPost = PostMessageInput & { content: string };
/** A thread creation as the fakes record it: with the name the runtime would give in the default language. */
export type RecordedThread = CreateThreadInput & { name: string };

/** A fake `postReminder`/`postEscalation`/`postMention`. */
export function fakePost(answer: (input: RecordedPost, call: number) => Answer<PostMessageOutput>) {
  return scripted<PostMessageInput, PostMessageOutput, RecordedPost>(answer, (input) => ({
    ...input,
    content: renderCollaborationText(input.text),
  }));
}

/** A fake `createThread`. */
export function fakeCreateThread(
  answer: (input: RecordedThread, call: number) => Answer<CreateThreadOutput>,
) {
  return scripted<CreateThreadInput, CreateThreadOutput, RecordedThread>(answer, (input) => ({
    ...input,
    name: renderCollaborationText(input.text),
  }));
}

/**
 * A test's wall clock (a `VirtualClock`): fakes stamp their outputs and errors with `clock.now()`, and
 * one that takes time moves it on.
 */
export type Clock = Pick<VirtualClock, "now" | "moveTo">;

/** `ms` pass on the clock (a call that takes that long), firing what falls due; the time then. */
export function elapse(clock: Clock, ms: number): number {
  clock.moveTo(clock.now() + ms);
  return clock.now();
}

/** A post that succeeds at the clock's time, as message `${prefix}-{call}`. */
export function postingAt(clock: Clock, prefix = "msg") {
  return fakePost((_, call) => ({ ok: { messageId: `${prefix}-${call}`, at: clock.now() } }));
}

const ROUTE = "/channels/:id/messages";
const URL = `https://discord.com/api/v10/channels/${IDS.channel}/messages`;
const NO_BODY = { body: undefined, files: undefined };

/** Stamps a failure with the time it happened, as the runtime's Discord actors do. */
function stamped<E extends object>(error: E, at: number | undefined): E {
  return at === undefined ? error : Object.assign(error, { at });
}

/** discord.js's DiscordAPIError: 403/50013 Missing Permissions, 404/10003 Unknown Channel, 400/50035 Invalid Form Body. */
export function discordApiError(status: 400 | 403 | 404, at?: number): DiscordAPIError {
  const known = {
    400: { code: 50035, message: "Invalid Form Body" },
    403: { code: 50013, message: "Missing Permissions" },
    404: { code: 10003, message: "Unknown Channel" },
  }[status];
  return stamped(new DiscordAPIError(known, known.code, status, "POST", URL, NO_BODY), at);
}

/** discord.js's HTTPError: a 5xx that outlived the client's own retries. */
export function httpError(status: 500 | 502 | 503 = 500, at?: number): HTTPError {
  return stamped(new HTTPError(status, "Internal Server Error", "POST", URL, NO_BODY), at);
}

/** discord.js's RateLimitError (a strict client's `rejectOnRateLimit`): `retryAfter` in milliseconds. */
export function rateLimitError(retryAfterMs: number, at?: number): RateLimitError {
  return stamped(
    new RateLimitError({
      timeToReset: retryAfterMs,
      limit: 5,
      method: "POST",
      hash: "fake-bucket",
      url: URL,
      route: ROUTE,
      majorParameter: IDS.channel,
      global: false,
      retryAfter: retryAfterMs,
      sublimitTimeout: 0,
      scope: "user",
    }),
    at,
  );
}

/**
 * Collects what every actor of a system emits (an invoked child emits on itself, not on its parent):
 * pass `inspect` to `createActor`.
 */
export function emittedEvents() {
  const events: AnyEventObject[] = [];
  const inspect = (ev: InspectionEvent) => {
    if (ev.type !== "@xstate.actor") return;
    const ref = ev.actorRef as Partial<Pick<AnyActorRef, "on">>;
    ref.on?.("*", (e: AnyEventObject) => events.push(e));
  };
  const ofType = (type: A2AEvent["type"]) => events.filter((e) => e.type === type);
  /** Every collected event parsed with A2AEventSchema (throws on the first that does not parse). */
  const parsed = () => events.map((e) => A2AEventSchema.parse(e));
  return { events, inspect, ofType, parsed };
}

/** The value and context of a snapshot, for before/after comparisons. */
export function stateOf(actor: AnyActorRef): { value: unknown; context: unknown } {
  const snapshot = actor.getSnapshot() as { value: unknown; context: unknown };
  return { value: snapshot.value, context: snapshot.context };
}

export type CollaborationStep = "postStarter" | "createThread" | "postMention";

/**
 * Discord as the runtime's side effects meet it: a post whose nonce key was used before returns the
 * first message (enforce_nonce), and a thread opened again from the same message is the one opened
 * before (400 / 160004, which the runtime reads as found). `crashAfter` makes that step take effect in
 * Discord and never answer, as when the process dies between Discord's answer and the next snapshot.
 */
export function idempotentDiscord(clock: Clock) {
  const messages: Array<PostMessageInput & { messageId: string }> = [];
  const threads: Array<CreateThreadInput & { threadId: string }> = [];
  const world: { crashAfter?: CollaborationStep } = {};
  let ids = 0;
  const hang = () => new Promise<never>(() => {});
  const post = (step: CollaborationStep | "system") =>
    fromPromise<PostMessageOutput, PostMessageInput>(async ({ input }) => {
      const first = messages.find((m) => m.nonceKey === input.nonceKey);
      const messageId = first?.messageId ?? `140000000000000${++ids}`;
      if (first === undefined) messages.push({ ...input, messageId });
      return world.crashAfter === step ? hang() : { messageId, at: clock.now() };
    });
  const createThread = fromPromise<CreateThreadOutput, CreateThreadInput>(async ({ input }) => {
    const threadId = input.fromMessageId ?? `150000000000000${++ids}`;
    if (!threads.some((t) => t.threadId === threadId)) threads.push({ ...input, threadId });
    return world.crashAfter === "createThread" ? hang() : { threadId, at: clock.now() };
  });
  const machine = collaborateMachine.provide({
    actors: {
      postStarter: post("postStarter"),
      createThread,
      postMention: post("postMention"),
      mention: mentionMachine.provide({
        actors: { postReminder: post("system"), postEscalation: post("system") },
      }),
    },
  });
  return { world, messages, threads, machine };
}

/** Starts an actor from a persisted snapshot, as the runtime resumes one after a restart. */
export function restoreActor(
  machine: AnyStateMachine,
  snapshot: unknown,
  inspect?: (ev: InspectionEvent) => void,
) {
  const actor = createActor(machine, {
    snapshot: snapshot as AnyMachineSnapshot,
    ...(inspect === undefined ? {} : { inspect }),
  });
  actor.start();
  return actor;
}

let snowflakes = 0n;
/** A Discord message id made at `ms` (Discord's layout: ms since 2015 << 22, then an increment). */
export function snowflakeAt(ms: number): string {
  snowflakes = (snowflakes + 1n) & 0xfffn;
  return (((BigInt(Math.floor(ms)) - 1_420_070_400_000n) << 22n) | snowflakes).toString();
}
