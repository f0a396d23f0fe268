import { describe, expect, it } from "vitest";
import {
  buildAgentToAgentAnnounceContext,
  buildAgentToAgentReplyContext,
  buildCollaborationThreadName,
  buildEscalationMessage,
  buildFailureNotice,
  buildNoReplyOutcomeMessage,
  buildReminderMessage,
  buildReportThreadName,
  buildThreadStarterMessage,
  classifyA2AError,
  decidePreflight,
  isReportThreadName,
  type PreflightContext,
} from "../../../src/policies/index.js";
import { en } from "../../../src/policies/messages/en.js";
import { messageCatalog } from "../../../src/policies/messages/messageCatalog.js";

// Each text with the English catalog; the Korean defaults are the other service tests'.

const mention = {
  targetBotId: "11",
  originalText: "review  the\nPR",
  attempts: 2,
  maxAttempts: 3,
  elapsedMinutes: 10,
};

describe("mention texts in English", () => {
  it("reminder", () => {
    expect(buildReminderMessage(mention, en)).toBe(
      '[Reminder 2/3] <@11> could you take a look at the request above?\nOriginal: "review the PR" (10 min ago)',
    );
  });

  it("escalation, with and without a human to ping", () => {
    const text = '⚠️ No response (3 attempts, 15 min)\nTarget: <@11>\nRequest: "review the PR"\n';
    const last = { ...mention, attempts: 3, elapsedMinutes: 15 };
    expect(buildEscalationMessage({ ...last, escalationMentionId: "99" }, en)).toBe(
      `${text}<@99> Please take a look.`,
    );
    expect(buildEscalationMessage(last, en)).toBe(`${text}Please take a look.`);
  });

  it("failure notice, with its location line only when the channel is known", () => {
    const p = {
      fromName: "Ruda",
      toName: "Eden",
      errorCode: "discord_permission",
      errorMessage: "Missing Permissions",
      originalText: "review",
    };
    expect(buildFailureNotice({ ...p, channelId: "5", escalationMentionId: "99" }, en)).toBe(
      [
        "⚠️ Collaboration failed: Ruda → Eden (discord_permission)",
        "Where: <#5>",
        "Reason: Missing Permissions",
        'Request: "review"',
        "<@99> Please check the bot's permissions in the channel.",
      ].join("\n"),
    );
    expect(buildFailureNotice({ ...p, errorCode: "discord_not_found" }, en).split("\n")).toEqual([
      "⚠️ Collaboration failed: Ruda → Eden (discord_not_found)",
      "Reason: Missing Permissions",
      'Request: "review"',
      "Please check that the bot and the channel exist.",
    ]);
  });
});

describe("thread names in English", () => {
  it("collaboration thread: with a topic, from the message, without any, and cut to 100 characters", () => {
    expect(buildCollaborationThreadName({ fromName: "Ruda", toName: "Eden", topic: "auth" }, en)).toBe(
      "[Collab] Ruda → Eden · auth",
    );
    expect(
      buildCollaborationThreadName({ fromName: "Ruda", toName: "Eden", message: "\nfirst line\nsecond" }, en),
    ).toBe("[Collab] Ruda → Eden · first line");
    expect(buildCollaborationThreadName({ fromName: "Ruda", toName: "Eden" }, en)).toBe(
      "[Collab] Ruda → Eden",
    );
    const long = buildCollaborationThreadName(
      { fromName: "Ruda", toName: "Eden", topic: "x".repeat(200) },
      en,
    );
    expect(long).toBe(`[Collab] Ruda → Eden · ${"x".repeat(100 - "[Collab] Ruda → Eden · ".length)}`);
  });

  it("starter message", () => {
    expect(buildThreadStarterMessage("[Collab] Ruda → Eden · <@12> ping", en)).toBe(
      "🧵 [Collab] Ruda → Eden · @12 ping",
    );
  });

  it("report thread", () => {
    expect(buildReportThreadName("a2a.complete", Date.UTC(2026, 0, 2, 3, 4, 5), en)).toBe(
      "[Report] a2a.complete · 2026-01-02T03:04:05.000Z",
    );
  });
});

describe("report threads are recognised by name in either language", () => {
  it("by the built-in prefixes, whatever catalog is given", () => {
    for (const name of ["[리포트] a2a.complete · t", "[Report] a2a.complete · t", "  [Report] x"]) {
      expect(isReportThreadName(name), name).toBe(true);
      expect(isReportThreadName(name, messageCatalog({ locale: "en" })), name).toBe(true);
    }
    expect(isReportThreadName("[Collab] Ruda → Eden")).toBe(false);
    expect(isReportThreadName("Report on the release")).toBe(false);
  });

  it("and by an overridden template's prefix when that catalog is given", () => {
    const catalog = messageCatalog({ messages: { reportThreadName: "📋 Log: {eventType} {time}" } });
    expect(isReportThreadName("📋 Log: a2a.complete 2026", catalog)).toBe(true);
    expect(isReportThreadName("📋 Log: a2a.complete 2026")).toBe(false);
  });

  it("preflight drops a message in such a thread", () => {
    const catalog = messageCatalog({ messages: { reportThreadName: "📋 Log: {eventType} {time}" } });
    const ctx: PreflightContext = {
      threadCommunication: {
        enabled: true,
        allowSiblingMentionsInThreads: true,
        allowHumanMentionsInThreads: true,
      },
      allowedChannels: [],
      agentOfBot: new Map([["11", "eden"]]),
      participantsOf: () => [],
      isSinkThread: () => false,
      parentOf: () => undefined,
      messages: catalog,
    };
    const inThread = (threadName: string) => ({
      messageId: "1",
      channelId: "2",
      threadId: "2",
      threadName,
      authorId: "99",
      authorIsBot: false,
      content: "<@11> hi",
      mentionUserIds: ["11"],
      ts: 1,
    });
    for (const name of ["📋 Log: a2a.retry 2026", "[Report] a2a.retry · 2026"]) {
      expect(decidePreflight(inThread(name), ctx), name).toEqual({ action: "drop", reason: "sink_thread" });
    }
    expect(decidePreflight(inThread("[Collab] a → b"), ctx).action).toBe("handle");
  });
});

describe("reply-wait texts in English", () => {
  it("outcome messages, most specific reason first", () => {
    expect(buildNoReplyOutcomeMessage({}, en)).toBe("[outcome] blocked: no reply received");
    expect(buildNoReplyOutcomeMessage({ waitError: "boom" }, en)).toBe(
      "[outcome] blocked: no reply received (boom)",
    );
    expect(buildNoReplyOutcomeMessage({ waitStatus: "not_found" }, en)).toBe(
      "[outcome] blocked: no reply received (run not found)",
    );
    expect(buildNoReplyOutcomeMessage({ waitStatus: "error" }, en)).toBe(
      "[outcome] blocked: no reply received (run failed)",
    );
    expect(buildNoReplyOutcomeMessage({ maxWaitExceeded: true, maxWaitMs: 90_000 }, en)).toBe(
      "[outcome] blocked: no reply received (waited more than 90 s)",
    );
  });

  it.each([
    [{ gatewayError: new Error("ECONNRESET"), attempt: 0 }, "Could not reach the gateway: ECONNRESET"],
    [{ waitStatus: "not_found", attempt: 0 }, "run not found"],
    [{ waitError: "429 too many requests", attempt: 0 }, "LLM API rate limit"],
    [{ waitError: "context length exceeded", attempt: 0 }, "over the LLM's context window"],
    [{ waitError: "HTTP 503", attempt: 0 }, "LLM servers overloaded"],
    [{ waitStatus: "error", attempt: 0 }, "the run failed for an unknown reason"],
    [{ waitStatus: "timeout", attempt: 0 }, "no reply within the wait"],
  ])("classifyA2AError(%o).message", (p, message) => {
    expect(classifyA2AError(p, en).message).toBe(message);
  });
});

describe("agent prompts with an overridden catalog", () => {
  const catalog = messageCatalog({
    locale: "en",
    messages: {
      replyContext: "Tour {turn}/{maxTurns} ({role}); {remaining} left.\n{previous}\nSkip: {skipToken}",
      replyRoleTarget: "cible",
      replyContextPrevious: "Before: {summary}",
      announceContext: "{original} | {roundOneReply} | {latestReply} | {skipToken}",
      announceNone: "-",
    },
  });
  const reply = {
    requesterSessionKey: "a",
    targetSessionKey: "b",
    currentRole: "target" as const,
    turn: 2,
    maxTurns: 3,
    originalMessage: "m",
    messageIntent: "question",
  };

  it("reply context, with and without a summary", () => {
    expect(buildAgentToAgentReplyContext(reply, catalog)).toBe("Tour 2/3 (cible); 2 left.\nSkip: REPLY_SKIP");
    expect(buildAgentToAgentReplyContext({ ...reply, previousTurnSummary: "s" }, catalog)).toBe(
      "Tour 2/3 (cible); 2 left.\nBefore: s\nSkip: REPLY_SKIP",
    );
  });

  it("announce context", () => {
    expect(buildAgentToAgentAnnounceContext({ originalMessage: "m", latestReply: "r" }, catalog)).toBe(
      "m | - | r | ANNOUNCE_SKIP",
    );
  });
});
