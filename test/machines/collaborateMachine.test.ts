import { MachineInputError } from "../../src/machines/MachineInputError.js";
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import {
  A2AEventSchema,
  type CollaborateInput,
  collaborateMachine,
  mentionMachine,
} from "../../src/index.js";
import { type CollaborateContext, type MentionContext } from "../../src/machines/index.js";
import { VirtualClock } from "../../src/testing/index.js";
import {
  type Answer,
  type Clock,
  discordApiError,
  elapse,
  emittedEvents,
  fakeCreateThread,
  fakePost,
  httpError,
  IDS,
  idempotentDiscord,
  type CollaborationStep,
  restoreActor,
  MINUTE,
  postingAt,
  rateLimitError,
  SECOND,
  T0,
  type RecordedPost,
} from "../support/discordFakes.js";

// One discord_send: validate, resolve the thread (a new one is opened from a starter message in the
// channel), post the mention in the thread, retry what Discord allows, then track the answer through the
// mention child.

const TARGET = IDS.targetBot;
const HUMAN = IDS.human;
const MESSAGE = "인증 모듈 코드 리뷰 해줘";

const base: CollaborateInput = {
  collaborationId: "collab-1",
  fromAgentId: "ruda",
  targetAgentId: "eden",
  fromName: "루다",
  toName: "이든",
  targetBotId: TARGET,
  message: MESSAGE,
  channelId: IDS.channel,
  threadName: "인증 모듈 코드 리뷰",
  allowedChannels: [IDS.channel],
  maxMessageLength: 2000,
  mention: {
    responseTimeoutMs: 300_000,
    urgentResponseTimeoutMs: 60_000,
    maxAttempts: 3,
    escalationMentionId: HUMAN,
    notifyOnFailure: true,
  },
  startedAt: T0,
};

/** How long a failing Discord call takes before it fails: failures happen after the call started. */
const CALL_MS = 300;

/** A Discord call that fails: it takes CALL_MS, and its error is stamped with the time it failed. */
function failsAfterCall(clock: Clock): number {
  return elapse(clock, CALL_MS);
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

type PostFake = ReturnType<typeof fakePost>;
type ThreadFake = ReturnType<typeof fakeCreateThread>;

function startCollaboration(
  overrides: Partial<CollaborateInput> | ((input: CollaborateInput) => CollaborateInput) = {},
  fakes: {
    starter?: (clock: Clock) => PostFake;
    thread?: (clock: Clock) => ThreadFake;
    post?: (clock: Clock) => PostFake;
    notice?: (clock: Clock) => PostFake;
  } = {},
) {
  const clock = new VirtualClock(T0);
  const starters = fakes.starter?.(clock) ?? postingAt(clock, "starter");
  const threads =
    fakes.thread?.(clock) ?? fakeCreateThread(() => ({ ok: { threadId: IDS.newThread, at: clock.now() } }));
  const posts = fakes.post?.(clock) ?? postingAt(clock, "mention");
  const notices = fakes.notice?.(clock) ?? postingAt(clock, "notice");
  const reminders = postingAt(clock, "reminder");
  const escalations = postingAt(clock, "escalation");
  const emitted = emittedEvents();
  const live = collaborateMachine.provide({
    actors: {
      postStarter: starters.logic,
      createThread: threads.logic,
      postMention: posts.logic,
      postNotice: notices.logic,
      mention: mentionMachine.provide({
        actors: { postReminder: reminders.logic, postEscalation: escalations.logic },
      }),
    },
  });
  const input = typeof overrides === "function" ? overrides(base) : { ...base, ...overrides };
  const actor = createActor(live, { input, inspect: emitted.inspect, clock });
  actor.start();
  const context = (): CollaborateContext => actor.getSnapshot().context;
  const mentionContext = (): MentionContext | undefined => {
    const child = actor.getSnapshot().children.mention;
    return (child?.getSnapshot() as { context?: MentionContext } | undefined)?.context;
  };
  /** When the retry's delay (`after: { retryDelay }`) is due, on XState's clock. */
  const nextRetry = () => clock.nextDue() ?? Number.NaN;
  /** Time passes to `at` (default: when the retry is due): the retry's delay fires if it is due by then. */
  const retryDue = async (at = nextRetry()) => {
    clock.moveTo(at);
    await settle();
  };
  /** Time passes to `at`: the mention's timeouts (`after` delays) due by then fire on the way. */
  const timeout = async (at: number) => {
    clock.moveTo(at);
    await settle();
  };
  const answer = async (authorId: string, at: number) => {
    clock.moveTo(Math.max(clock.now(), at));
    actor.send({ type: "RESPONSE_RECEIVED", authorId, at });
    await settle();
  };
  return {
    actor,
    clock,
    starters,
    threads,
    posts,
    notices,
    reminders,
    escalations,
    emitted,
    context,
    mentionContext,
    retryDue,
    nextRetry,
    timeout,
    answer,
  };
}

/** A post fake failing on the listed calls (1-based) with `fail(clock)`, posting `${prefix}-{call}` on the others. */
function postFailing(calls: number[], fail: (at: number) => unknown, prefix = "mention") {
  return (clock: Clock) =>
    fakePost((_, call): Answer<{ messageId: string; at: number }> => {
      if (calls.includes(call)) return { fail: fail(failsAfterCall(clock)) };
      return { ok: { messageId: `${prefix}-${call}`, at: clock.now() } };
    });
}

describe("validation: a rejected collaboration sends nothing", () => {
  const { targetBotId: _targetBotId, ...withoutTarget } = base;
  const mentionPrefix = `<@${TARGET}> `;
  const cases: Array<[string, (input: CollaborateInput) => CollaborateInput, string]> = [
    ["the target is not a configured agent (no bot id)", () => withoutTarget, "unknown_agent"],
    ["the message is blank", (i) => ({ ...i, message: " \n\t " }), "empty_message"],
    [
      "the message fits alone but not with its mention",
      (i) => ({ ...i, message: "가".repeat(2000 - mentionPrefix.length + 1) }),
      "message_too_long",
    ],
    [
      "the channel is outside allowedChannels, even though a default channel exists",
      (i) => ({ ...i, channelId: IDS.otherChannel, defaultChannel: IDS.channel }),
      "channel_not_allowed",
    ],
    [
      "the explicit thread's parent is outside allowedChannels",
      (i) => ({ ...i, threadId: IDS.explicitThread, threadParentId: IDS.otherChannel }),
      "channel_not_allowed",
    ],
    [
      "no channel is given and the default channel is not in allowedChannels (a strict allowlist)",
      (i) => ({ ...i, channelId: undefined, defaultChannel: IDS.otherChannel }),
      "channel_not_allowed",
    ],
    [
      "no channel is given and there is no default channel",
      (i) => ({ ...i, channelId: undefined, defaultChannel: undefined }),
      "channel_not_allowed",
    ],
    ["the loop guard refused the call", (i) => ({ ...i, loopGuard: { allowed: false } }), "loop_guard"],
    [
      "the sender is answering the target in its thread",
      (i) => ({ ...i, replyInThread: true }),
      "reply_in_thread",
    ],
  ];

  it.each(cases)("%s", async (_label, make, code) => {
    const c = startCollaboration(make);
    await settle();
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.status).toBe("done");
    expect(snapshot.value).toBe("rejected");
    expect(snapshot.output?.status).toBe("rejected");
    expect(snapshot.output?.error?.code).toBe(code);
    expect(snapshot.output?.error?.message).toEqual(expect.any(String));
    expect(c.starters.inputs).toEqual([]);
    expect(c.threads.inputs).toEqual([]);
    expect(c.posts.inputs).toEqual([]);
    expect(c.emitted.ofType("a2a.collaborate.sent")).toEqual([]);
    expect(snapshot.children).toEqual({});
    // The rejection is an event, with its code, for the audit trail; nothing here calls a human.
    const failed = c.emitted.parsed().filter((e) => e.type === "a2a.collaborate.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ ts: T0, fromAgent: "ruda", toAgent: "eden" });
    expect(failed[0]?.data).toMatchObject({
      collaborationId: "collab-1",
      errorCode: code,
      errorMessage: snapshot.output?.error?.message,
      escalate: false,
    });
    expect(c.notices.inputs).toEqual([]);
  });

  it("a message exactly at the limit with its mention is sent", async () => {
    const message = "가".repeat(2000 - mentionPrefix.length);
    const c = startCollaboration({ message });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.posts.inputs[0]?.content).toHaveLength(2000);
  });
});

describe("thread resolution", () => {
  it("an explicit thread is posted into as is, without creating one", async () => {
    const c = startCollaboration({
      threadId: IDS.explicitThread,
      threadParentId: IDS.channel,
      reusableThread: { threadId: IDS.reusedThread, channelId: IDS.channel },
    });
    await settle();
    expect(c.starters.inputs).toEqual([]);
    expect(c.threads.inputs).toEqual([]);
    expect(c.posts.inputs.map((p) => p.channelId)).toEqual([IDS.explicitThread]);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.mentionContext()?.threadId).toBe(IDS.explicitThread);
  });

  it("a reusable thread of the route is reused", async () => {
    const c = startCollaboration({ reusableThread: { threadId: IDS.reusedThread, channelId: IDS.channel } });
    await settle();
    expect(c.starters.inputs).toEqual([]);
    expect(c.threads.inputs).toEqual([]);
    expect(c.posts.inputs.map((p) => p.channelId)).toEqual([IDS.reusedThread]);
    const sent = c.emitted.ofType("a2a.collaborate.sent")[0];
    expect(sent?.data).toMatchObject({ threadId: IDS.reusedThread, mode: "reuse_thread" });
  });

  const THREAD_NAME_PARAMS = {
    fromName: "루다",
    toName: "이든",
    topic: "인증 모듈 코드 리뷰",
    message: MESSAGE,
  };

  it("otherwise a starter pinging nobody is posted in the channel, a [협업] {from} → {to} · {topic} thread is opened from it, and the mention is posted inside", async () => {
    const c = startCollaboration();
    await settle();
    expect(c.starters.inputs).toEqual([
      {
        asAgentId: "ruda",
        channelId: IDS.channel,
        content: "🧵 [협업] 루다 → 이든 · 인증 모듈 코드 리뷰",
        // What the starter says, for the runtime to post it in the configured language.
        text: { kind: "threadStarter", params: THREAD_NAME_PARAMS },
        mentionUserIds: [],
        nonceKey: "collab-1:starter",
      },
    ]);
    // Opened from the starter: Discord allows one thread per message, so a re-run cannot open two.
    expect(c.threads.inputs).toEqual([
      {
        asAgentId: "ruda",
        channelId: IDS.channel,
        fromMessageId: "starter-1",
        name: "[협업] 루다 → 이든 · 인증 모듈 코드 리뷰",
        text: { kind: "threadName", params: THREAD_NAME_PARAMS },
      },
    ]);
    // In the thread, where a sibling bot's mention is handled.
    expect(c.posts.inputs).toEqual([
      {
        asAgentId: "ruda",
        channelId: IDS.newThread,
        content: `<@${TARGET}> ${MESSAGE}`,
        text: { kind: "mention", params: { targetBotId: TARGET, message: MESSAGE } },
        mentionUserIds: [TARGET],
        nonceKey: "collab-1:mention",
      },
    ]);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.context()).toMatchObject({
      starterMessageId: "starter-1",
      resolvedThreadId: IDS.newThread,
      messageId: "mention-1",
    });
    expect(c.mentionContext()).toMatchObject({ threadId: IDS.newThread, messageId: "mention-1" });
    const sent = c.emitted.ofType("a2a.collaborate.sent");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.data).toMatchObject({
      threadId: IDS.newThread,
      parentChannelId: IDS.channel,
      mode: "new_thread",
      messageId: "mention-1",
    });
  });

  it("the starter carries no mention markup, even when the topic has some", async () => {
    const c = startCollaboration({ threadName: undefined, message: `<@${IDS.otherBot}> 와 같이 봐 주세요` });
    await settle();
    const starter = c.starters.inputs[0];
    expect(starter?.content).not.toMatch(/<@/);
    expect(starter?.content).toContain(`@${IDS.otherBot}`);
    expect(starter?.mentionUserIds).toEqual([]);
  });

  it("without a thread name the topic is the message's first line, cut to 30 characters", async () => {
    const firstLine = "인증 모듈의 토큰 갱신 로직을 함께 검토하고 리팩터링 방향을 정하고 싶어요";
    const c = startCollaboration({ threadName: undefined, message: `${firstLine}\n세부 사항은 아래에` });
    await settle();
    const name = c.threads.inputs[0]?.name ?? "";
    expect(name.startsWith("[협업] 루다 → 이든 · 인증 모듈의 토큰")).toBe(true);
    expect(name.length).toBeLessThanOrEqual("[협업] 루다 → 이든 · ".length + 30);
    expect(c.starters.inputs[0]?.content).toBe(`🧵 ${name}`);
  });

  it("without a channel the thread is created in the default channel", async () => {
    const c = startCollaboration({ channelId: undefined, defaultChannel: IDS.channel });
    await settle();
    expect(c.starters.inputs[0]?.channelId).toBe(IDS.channel);
    expect(c.threads.inputs[0]?.channelId).toBe(IDS.channel);
  });
});

describe("the mention", () => {
  it("starts with the target's mention, pings exactly the target, and is posted by the requester", async () => {
    const c = startCollaboration();
    await settle();
    const post = c.posts.inputs[0] as RecordedPost;
    expect(post.asAgentId).toBe("ruda");
    expect(post.content.startsWith(`<@${TARGET}>`)).toBe(true);
    expect(post.content).toContain(MESSAGE);
    expect(post.mentionUserIds).toEqual([TARGET]);
    expect(c.context()).toMatchObject({ messageId: "mention-1", sentAt: T0 });
    const types = c.emitted.parsed().map((e) => e.type);
    expect(types).toEqual(["a2a.collaborate.requested", "a2a.collaborate.sent"]);
  });

  it("the mention's first timeout counts from when the mention was actually sent, not the starter or the thread", async () => {
    const c = startCollaboration(
      {},
      {
        // Each call takes a second.
        starter: (clock) => fakePost(() => ({ ok: { messageId: "starter-1", at: elapse(clock, SECOND) } })),
        thread: (clock) =>
          fakeCreateThread(() => ({ ok: { threadId: IDS.newThread, at: elapse(clock, SECOND) } })),
        post: (clock) =>
          fakePost((_, call) => ({ ok: { messageId: `m-${call}`, at: elapse(clock, SECOND) } })),
      },
    );
    await settle();
    expect(c.context()).toMatchObject({ sentAt: T0 + 3 * SECOND, lastAt: T0 + 3 * SECOND });
    expect(c.mentionContext()).toMatchObject({ sentAt: T0 + 3 * SECOND });
    expect(c.clock.nextDue()).toBe(T0 + 3 * SECOND + 5 * MINUTE);
    expect(c.emitted.ofType("a2a.collaborate.sent")[0]?.ts).toBe(T0 + 3 * SECOND);
  });
});

describe("Discord failures", () => {
  it("403 fails at once as discord_permission and escalates", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => discordApiError(403, at)) });
    await settle();
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.value).toBe("failed");
    expect(snapshot.output?.error?.code).toBe("discord_permission");
    expect(c.posts.inputs).toHaveLength(1);
    const failed = c.emitted.parsed().filter((e) => e.type === "a2a.collaborate.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({ errorCode: "discord_permission", escalate: true });
  });

  it("403 on the starter fails the same way, before any thread or mention", async () => {
    const c = startCollaboration({}, { starter: postFailing([1], (at) => discordApiError(403, at)) });
    await settle();
    expect(c.actor.getSnapshot().output?.error?.code).toBe("discord_permission");
    expect(c.starters.inputs).toHaveLength(1);
    expect(c.threads.inputs).toEqual([]);
    expect(c.posts.inputs).toEqual([]);
    expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({ escalate: true });
  });

  it("403 on opening the thread fails the same way, after the starter was posted and before the mention", async () => {
    const c = startCollaboration(
      {},
      { thread: (clock) => fakeCreateThread(() => ({ fail: discordApiError(403, failsAfterCall(clock)) })) },
    );
    await settle();
    expect(c.actor.getSnapshot().output?.error?.code).toBe("discord_permission");
    expect(c.starters.inputs.map((p) => p.channelId)).toEqual([IDS.channel]);
    expect(c.threads.inputs).toHaveLength(1);
    expect(c.posts.inputs).toEqual([]);
    expect(c.emitted.ofType("a2a.collaborate.sent")).toEqual([]);
    expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({ escalate: true });
  });

  it("404 fails at once as discord_not_found and escalates", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => discordApiError(404, at)) });
    await settle();
    expect(c.actor.getSnapshot().output?.error?.code).toBe("discord_not_found");
    expect(c.posts.inputs).toHaveLength(1);
    expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({
      errorCode: "discord_not_found",
      escalate: true,
    });
  });

  it("another 4xx fails at once as discord_invalid, without retry or escalation", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => discordApiError(400, at)) });
    await settle();
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.value).toBe("failed");
    expect(snapshot.output?.error?.code).toBe("discord_invalid");
    expect(c.posts.inputs).toHaveLength(1);
    for (const e of c.emitted.ofType("a2a.collaborate.failed"))
      expect(e.data).toMatchObject({ escalate: false });
  });

  it("429 waits retryAfter from the failure, then retries with the same nonce key and succeeds", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => rateLimitError(1_500, at)) });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("retrying");
    expect(c.nextRetry()).toBe(T0 + CALL_MS + 1_500);
    expect(c.posts.inputs).toHaveLength(1);

    await c.retryDue();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.posts.inputs).toHaveLength(2);
    expect(c.posts.inputs[1]?.nonceKey).toBe(c.posts.inputs[0]?.nonceKey);
    expect(c.posts.inputs[1]).toEqual(c.posts.inputs[0]);
    // Resumed at the mention: the starter and the thread are not made again.
    expect(c.starters.inputs).toHaveLength(1);
    expect(c.threads.inputs).toHaveLength(1);
    expect(c.context()).toMatchObject({ messageId: "mention-2", sentAt: T0 + CALL_MS + 1_500 });
    expect(c.emitted.ofType("a2a.collaborate.sent")).toHaveLength(1);
    expect(c.emitted.ofType("a2a.collaborate.failed")).toHaveLength(0);
  });

  it("429 on thread creation retries the creation after retryAfter", async () => {
    const c = startCollaboration(
      {},
      {
        thread: (clock) =>
          fakeCreateThread((_, call) =>
            call === 1
              ? { fail: rateLimitError(2_500, failsAfterCall(clock)) }
              : { ok: { threadId: IDS.newThread, at: clock.now() } },
          ),
      },
    );
    await settle();
    expect(c.nextRetry()).toBe(T0 + CALL_MS + 2_500);
    await c.retryDue();
    expect(c.threads.inputs).toHaveLength(2);
    expect(c.threads.inputs[1]).toEqual(c.threads.inputs[0]);
    // Resumed at the thread: the starter was posted once; then the mention, once, in the thread.
    expect(c.starters.inputs).toHaveLength(1);
    expect(c.posts.inputs.map((p) => p.channelId)).toEqual([IDS.newThread]);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
  });

  it("5xx on the starter retries the starter with the same nonce key, then opens the thread and sends", async () => {
    const c = startCollaboration({}, { starter: postFailing([1], (at) => httpError(502, at), "starter") });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("retrying");
    expect(c.threads.inputs).toEqual([]);
    await c.retryDue();
    expect(c.starters.inputs).toHaveLength(2);
    expect(c.starters.inputs[1]).toEqual(c.starters.inputs[0]);
    expect(c.threads.inputs.map((t) => t.fromMessageId)).toEqual(["starter-2"]);
    expect(c.posts.inputs.map((p) => p.channelId)).toEqual([IDS.newThread]);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.emitted.ofType("a2a.collaborate.sent")).toHaveLength(1);
  });

  it("does not retry before retryAfter has passed", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => rateLimitError(1_500, at)) });
    await settle();
    const due = c.nextRetry();
    await c.retryDue(due - 1);
    expect(c.actor.getSnapshot().value).toBe("retrying");
    expect(c.posts.inputs).toHaveLength(1);
    expect(c.nextRetry()).toBe(due);
  });

  it("5xx retries after 1 s, 2 s and 4 s, then fails as discord_unavailable without escalating", async () => {
    const c = startCollaboration({}, { post: postFailing([1, 2, 3, 4], (at) => httpError(500, at)) });
    await settle();
    const waits: number[] = [];
    for (let retry = 1; retry <= 3; retry++) {
      expect(c.actor.getSnapshot().value).toBe("retrying");
      const failedAt = c.clock.now();
      const due = c.nextRetry();
      waits.push(due - failedAt);
      await c.retryDue();
    }
    expect(waits).toEqual([1_000, 2_000, 4_000]);
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.value).toBe("failed");
    expect(snapshot.output?.error?.code).toBe("discord_unavailable");
    expect(c.posts.inputs).toHaveLength(4);
    expect(new Set(c.posts.inputs.map((p) => p.nonceKey)).size).toBe(1);
    const failed = c.emitted.parsed().filter((e) => e.type === "a2a.collaborate.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({ errorCode: "discord_unavailable", escalate: false });
  });

  it("a timeout or dropped connection (no status) is retried like a 5xx", async () => {
    const dropped = (at: number) => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", at });
    const c = startCollaboration({}, { post: postFailing([1], dropped) });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("retrying");
    expect(c.nextRetry()).toBe(T0 + CALL_MS + SECOND);
    await c.retryDue();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.posts.inputs).toHaveLength(2);
  });

  it("5xx that clears on a retry sends the mention", async () => {
    const c = startCollaboration({}, { post: postFailing([1, 2], (at) => httpError(503, at)) });
    await settle();
    await c.retryDue();
    await c.retryDue();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.posts.inputs).toHaveLength(3);
    expect(c.context().messageId).toBe("mention-3");
  });

  it("429 still failing after three retries fails as discord_unavailable", async () => {
    const c = startCollaboration({}, { post: postFailing([1, 2, 3, 4], (at) => rateLimitError(1_500, at)) });
    await settle();
    for (let retry = 1; retry <= 3; retry++) {
      expect(c.nextRetry()).toBe(c.clock.now() + 1_500);
      await c.retryDue();
    }
    expect(c.actor.getSnapshot().output?.error?.code).toBe("discord_unavailable");
    expect(c.posts.inputs).toHaveLength(4);
  });
});

describe("a 403/404 notifies the escalation channel", () => {
  const withEscalationChannel: Partial<CollaborateInput> = { defaultChannel: IDS.channel };
  const forbiddenMention = postFailing([1], (at) => discordApiError(403, at));

  it("posts one notice in the default channel, by the requester, pinging only the human", async () => {
    const c = startCollaboration(withEscalationChannel, { post: forbiddenMention });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("failed");
    expect(c.notices.inputs).toHaveLength(1);
    const notice = c.notices.inputs[0] as RecordedPost;
    expect(notice).toMatchObject({
      asAgentId: "ruda",
      channelId: IDS.channel,
      mentionUserIds: [HUMAN],
      nonceKey: "collab-1:failure-notice",
    });
    expect(notice.content).toBe(
      [
        "⚠️ 협업 전송 실패: 루다 → 이든 (discord_permission)",
        `위치: <#${IDS.newThread}>`,
        "사유: Missing Permissions",
        `요청: "${MESSAGE}"`,
        `<@${HUMAN}> 채널 권한 확인 필요`,
      ].join("\n"),
    );
    // The failure is reported once, after the notice, with the time and try of the failure itself.
    const failed = c.emitted.parsed().filter((e) => e.type === "a2a.collaborate.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.ts).toBe(T0 + CALL_MS);
    expect(failed[0]?.data).toMatchObject({
      errorCode: "discord_permission",
      escalate: true,
      notified: true,
      attempt: 1,
    });
    expect(c.actor.getSnapshot().output?.error?.code).toBe("discord_permission");
  });

  it("a 404 on the starter names the parent channel and what to check", async () => {
    const c = startCollaboration(withEscalationChannel, {
      starter: postFailing([1], (at) => discordApiError(404, at)),
    });
    await settle();
    const content = c.notices.inputs[0]?.content ?? "";
    expect(content).toContain(`위치: <#${IDS.channel}>`);
    expect(content.split("\n").at(-1)).toBe(`<@${HUMAN}> 봇/채널 존재 확인 필요`);
  });

  it("without escalationMentionId it names nobody; with notifyOnFailure false nothing is posted", async () => {
    const nobody = startCollaboration(
      (i) => ({ ...i, ...withEscalationChannel, mention: { ...i.mention, escalationMentionId: undefined } }),
      { post: forbiddenMention },
    );
    await settle();
    const notice = nobody.notices.inputs[0] as RecordedPost;
    expect(notice.mentionUserIds).toEqual([]);
    expect(notice.content).not.toMatch(/<@!?\d+>/);
    expect(notice.content.split("\n").at(-1)).toBe("채널 권한 확인 필요");

    const silent = startCollaboration(
      (i) => ({ ...i, ...withEscalationChannel, mention: { ...i.mention, notifyOnFailure: false } }),
      { post: forbiddenMention },
    );
    await settle();
    expect(silent.actor.getSnapshot().value).toBe("failed");
    expect(silent.notices.inputs).toEqual([]);
    expect(silent.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({
      escalate: true,
      notified: false,
    });
  });

  it("is never posted in a channel outside allowedChannels, nor without a default channel", async () => {
    for (const overrides of [{ defaultChannel: IDS.otherChannel }, { defaultChannel: undefined }]) {
      const c = startCollaboration(overrides, { post: forbiddenMention });
      await settle();
      expect(c.actor.getSnapshot().value).toBe("failed");
      expect(c.notices.inputs).toEqual([]);
      expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({ notified: false });
    }
  });

  it("a non-escalating failure posts no notice", async () => {
    const c = startCollaboration(withEscalationChannel, {
      post: postFailing([1], (at) => discordApiError(400, at)),
    });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("failed");
    expect(c.notices.inputs).toEqual([]);
    expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).not.toHaveProperty("notified");
  });

  it("a notice answered 429 then 503 is retried after Retry-After, then 2 s (the second retry), with its nonce, and lands once", async () => {
    const c = startCollaboration(withEscalationChannel, {
      post: forbiddenMention,
      notice: (clock) =>
        fakePost((_, call) => {
          if (call === 1) return { fail: rateLimitError(2_500, failsAfterCall(clock)) };
          if (call === 2) return { fail: httpError(503, failsAfterCall(clock)) };
          return { ok: { messageId: `notice-${call}`, at: clock.now() } };
        }),
    });
    await settle();
    // discordSend has its answer already: the error is set while the notice waits.
    expect(c.actor.getSnapshot().value).toBe("noticeRetrying");
    expect(c.context().error?.code).toBe("discord_permission");
    expect(c.emitted.ofType("a2a.collaborate.failed")).toEqual([]);
    const firstDue = c.nextRetry();
    // The mention's call failed, then the notice's: Retry-After counts from the notice's failure.
    expect(firstDue).toBe(T0 + 2 * CALL_MS + 2_500);
    await c.retryDue(firstDue - 1);
    expect(c.notices.inputs).toHaveLength(1);
    await c.retryDue(firstDue);
    expect(c.nextRetry()).toBe(firstDue + CALL_MS + 2 * SECOND);
    await c.retryDue();
    expect(c.actor.getSnapshot().value).toBe("failed");
    expect(c.notices.inputs).toHaveLength(3);
    expect(new Set(c.notices.inputs.map((p) => p.nonceKey))).toEqual(new Set(["collab-1:failure-notice"]));
    expect(new Set(c.notices.inputs.map((p) => p.content)).size).toBe(1);
    const failed = c.emitted.parsed().filter((e) => e.type === "a2a.collaborate.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.ts).toBe(T0 + CALL_MS);
    expect(failed[0]?.data).toMatchObject({ escalate: true, notified: true, attempt: 1 });
  });

  it("a notice that fails for good ends failed, and the event says why nobody was told", async () => {
    const c = startCollaboration(withEscalationChannel, {
      post: forbiddenMention,
      notice: postFailing([1], (at) => discordApiError(403, at), "notice"),
    });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("failed");
    expect(c.notices.inputs).toHaveLength(1);
    expect(c.emitted.ofType("a2a.collaborate.failed")[0]?.data).toMatchObject({
      errorCode: "discord_permission",
      escalate: true,
      notified: false,
      noticeErrorCode: "discord_permission",
      noticeErrorMessage: "Missing Permissions",
    });
  });
});

describe("a crash at each step of a new thread: the re-run posts nothing twice and opens one thread", () => {
  const stateAt: Record<CollaborationStep, string> = {
    postStarter: "postingStarter",
    createThread: "creatingThread",
    postMention: "sending",
  };

  it.each(Object.keys(stateAt) as CollaborationStep[])(
    "killed after %s reached Discord, restored from the snapshot taken before it",
    async (step) => {
      const clock: Clock = new VirtualClock(T0);
      const discord = idempotentDiscord(clock);
      discord.world.crashAfter = step;
      const first = createActor(discord.machine, { input: base });
      first.start();
      await settle();
      const persisted = first.getPersistedSnapshot();
      first.stop();
      expect((persisted as { value?: unknown }).value).toBe(stateAt[step]);

      discord.world.crashAfter = undefined;
      clock.moveTo(T0 + MINUTE);
      const emitted = emittedEvents();
      const second = restoreActor(discord.machine, persisted, emitted.inspect);
      await settle();
      expect(second.getSnapshot().value).toBe("awaitingResponse");

      const [starter, mention, ...more] = discord.messages;
      expect(more).toEqual([]);
      expect(starter).toMatchObject({
        channelId: IDS.channel,
        mentionUserIds: [],
        nonceKey: "collab-1:starter",
      });
      expect(discord.threads).toEqual([expect.objectContaining({ threadId: starter?.messageId })]);
      expect(mention).toMatchObject({
        channelId: starter?.messageId,
        mentionUserIds: [TARGET],
        nonceKey: "collab-1:mention",
      });
      expect(second.getSnapshot().context).toMatchObject({
        starterMessageId: starter?.messageId,
        resolvedThreadId: starter?.messageId,
        messageId: mention?.messageId,
      });
      expect(emitted.ofType("a2a.collaborate.sent")).toHaveLength(1);
      second.stop();
    },
  );
});

describe("after sending: the mention child tracks the answer", () => {
  it("the target's answer ends the collaboration responded", async () => {
    const c = startCollaboration();
    await settle();
    await c.answer(TARGET, T0 + 3 * MINUTE);
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.value).toBe("responded");
    expect(snapshot.output).toMatchObject({
      status: "responded",
      collaborationId: "collab-1",
      threadId: IDS.newThread,
      messageId: "mention-1",
    });
    const events = c.emitted.parsed();
    const responded = events.filter((e) => e.type === "a2a.collaborate.responded");
    expect(responded).toHaveLength(1);
    expect(responded[0]).toMatchObject({ ts: T0 + 3 * MINUTE, fromAgent: "ruda", toAgent: "eden" });
    expect(responded[0]?.data).toMatchObject({
      threadId: IDS.newThread,
      fromAgentId: "ruda",
      toAgentId: "eden",
    });
  });

  it("a message from someone else, or from the target before the mention, does not", async () => {
    const c = startCollaboration({}, { post: (clock) => postingAt(clock, "mention") });
    c.clock.moveTo(T0 + MINUTE);
    await settle();
    await c.answer(IDS.otherBot, T0 + 2 * MINUTE);
    await c.answer(HUMAN, T0 + 2 * MINUTE);
    c.actor.send({ type: "RESPONSE_RECEIVED", authorId: TARGET, at: T0 - 30 * SECOND });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.mentionContext()?.attempts).toBe(1);
    expect(c.emitted.ofType("a2a.collaborate.responded")).toHaveLength(0);
  });

  it("no answer: reminders at 5 and 10 minutes in the thread, escalation at 15, the collaboration ends escalated", async () => {
    const c = startCollaboration({ reusableThread: { threadId: IDS.reusedThread, channelId: IDS.channel } });
    await settle();
    await c.timeout(T0 + 5 * MINUTE);
    await c.timeout(T0 + 10 * MINUTE);
    expect(c.reminders.inputs.map((p) => [p.asAgentId, p.channelId, p.mentionUserIds])).toEqual([
      ["ruda", IDS.reusedThread, [TARGET]],
      ["ruda", IDS.reusedThread, [TARGET]],
    ]);
    expect(c.reminders.inputs.map((p) => p.content.split("\n")[0])).toEqual([
      `[리마인더 1/3] <@${TARGET}> 위 요청에 대해 확인 부탁해요.`,
      `[리마인더 2/3] <@${TARGET}> 위 요청에 대해 확인 부탁해요.`,
    ]);
    expect(c.reminders.inputs[1]?.content).toContain(`"${MESSAGE}" (10분 전)`);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");

    await c.timeout(T0 + 15 * MINUTE);
    expect(c.escalations.inputs).toHaveLength(1);
    expect(c.escalations.inputs[0]?.mentionUserIds).toEqual([HUMAN]);
    expect(c.escalations.inputs[0]?.content).toContain(`<@${HUMAN}> 확인 필요`);
    const snapshot = c.actor.getSnapshot();
    expect(snapshot.value).toBe("escalated");
    expect(snapshot.output?.status).toBe("escalated");
    const types = c.emitted.parsed().map((e) => e.type);
    expect(types).toEqual([
      "a2a.collaborate.requested",
      "a2a.collaborate.sent",
      "a2a.mention.reminded",
      "a2a.mention.reminded",
      "a2a.mention.escalated",
    ]);
  });

  it("an urgent collaboration reminds after urgentResponseTimeoutMs", async () => {
    const c = startCollaboration({ urgent: true });
    await settle();
    expect(c.clock.nextDue()).toBe(T0 + MINUTE);
    await c.timeout(T0 + MINUTE);
    expect(c.reminders.inputs).toHaveLength(1);
  });

  it("reminders off: the mention waits untimed, no timeout reminds or escalates, the answer still ends it", async () => {
    const c = startCollaboration({ mention: { ...base.mention, enabled: false } });
    await settle();
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    expect(c.mentionContext()).toMatchObject({ enabled: false, attempts: 1 });
    expect(c.clock.nextDue()).toBeUndefined();
    for (const minutes of [5, 10, 15, 60]) await c.timeout(T0 + minutes * MINUTE);
    expect(c.reminders.inputs).toEqual([]);
    expect(c.escalations.inputs).toEqual([]);
    expect(c.actor.getSnapshot().value).toBe("awaitingResponse");
    await c.answer(TARGET, T0 + 61 * MINUTE);
    expect(c.actor.getSnapshot().output).toMatchObject({ status: "responded", mentionAttempts: 1 });
  });

  it("mention settings left out are the config's defaults: reminders on, every 5 minutes, 3 attempts", async () => {
    const c = startCollaboration({ mention: {} });
    await settle();
    expect(c.mentionContext()).toMatchObject({ enabled: true, responseTimeoutMs: 300_000, maxAttempts: 3 });
    expect(c.clock.nextDue()).toBe(T0 + 5 * MINUTE);
  });
});

describe("bad input: the collaboration fails at creation, naming the field", () => {
  const { collaborationId: _collaborationId, ...noId } = base;
  const { fromName: _fromName, ...noFromName } = base;
  const { message: _message, ...noMessage } = base;
  const { mention: _mention, ...noMention } = base;
  const { allowedChannels: _allowedChannels, ...noAllowedChannels } = base;
  const cases: Array<[string, unknown, string]> = [
    ["collaborationId missing", noId, "collaborationId"],
    ["fromName missing", noFromName, "fromName"],
    ["message missing", noMessage, "message"],
    ["mention missing", noMention, "mention"],
    ["allowedChannels missing", noAllowedChannels, "allowedChannels"],
    ["collaborationId empty", { ...base, collaborationId: "" }, "collaborationId"],
    ["fromAgentId blank", { ...base, fromAgentId: "  " }, "fromAgentId"],
    ["targetAgentId empty", { ...base, targetAgentId: "" }, "targetAgentId"],
    ["maxMessageLength 0", { ...base, maxMessageLength: 0 }, "maxMessageLength"],
    [
      "mention.maxAttempts 0",
      { ...base, mention: { ...base.mention, maxAttempts: 0 } },
      "mention.maxAttempts",
    ],
    [
      "mention.responseTimeoutMs negative",
      { ...base, mention: { ...base.mention, responseTimeoutMs: -1 } },
      "mention.responseTimeoutMs",
    ],
    ["startedAt negative", { ...base, startedAt: -5 }, "startedAt"],
    ["allowedChannels a string", { ...base, allowedChannels: IDS.channel }, "allowedChannels"],
    [
      "reusableThread with an empty threadId",
      { ...base, reusableThread: { threadId: "", channelId: IDS.channel } },
      "reusableThread.threadId",
    ],
    ["loopGuard.allowed a string", { ...base, loopGuard: { allowed: "yes" } }, "loopGuard.allowed"],
    ["urgent a string", { ...base, urgent: "true" }, "urgent"],
  ];

  it.each(cases)("%s", (_label, input, field) => {
    const snapshot = createActor(collaborateMachine, { input: input as CollaborateInput }).getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
    const message = snapshot.error instanceof Error ? snapshot.error.message : "";
    expect(message).toContain("collaborateMachine");
    expect(message).toContain(field);
  });

  it("no input at all", () => {
    const snapshot = createActor(collaborateMachine, {
      input: undefined as unknown as CollaborateInput,
    }).getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
  });
});

describe("events", () => {
  it("every event of a full run parses with A2AEventSchema", async () => {
    const c = startCollaboration({}, { post: postFailing([1], (at) => httpError(500, at)) });
    await settle();
    await c.retryDue();
    await c.timeout(T0 + CALL_MS + SECOND + 5 * MINUTE);
    await c.answer(TARGET, T0 + 7 * MINUTE);
    expect(c.actor.getSnapshot().value).toBe("responded");
    for (const e of c.emitted.events) expect(A2AEventSchema.safeParse(e).success, e.type).toBe(true);
    expect(c.emitted.events.map((e) => e.type)).toEqual([
      "a2a.collaborate.requested",
      "a2a.collaborate.sent",
      "a2a.mention.reminded",
      "a2a.collaborate.responded",
    ]);
  });
});
