import type { A2ARuntime, DiscordSendParams, SessionsSendParams } from "a2a-statecharts";
import { describe, expect, it } from "vitest";
import type { SubagentRuntime } from "../src/openclawApi.js";
import { createSubagentGateway } from "../src/subagentGateway.js";
import { createThreadReplies, replyNonce, splitReply } from "../src/threadReplies.js";
import { a2aSessionKey, createA2ASendTool, createDiscordSendTool, type ToolHost } from "../src/tools.js";

function fakeRuntime() {
  const sent: { discord: DiscordSendParams[]; sessions: SessionsSendParams[] } = {
    discord: [],
    sessions: [],
  };
  const runtime = {
    discordSend: async (p: DiscordSendParams) => {
      sent.discord.push(p);
      return {
        status: "sent" as const,
        threadId: "1500000000000000500",
        messageId: "1500000000000000500",
        mentionId: "m1",
      };
    },
    sessionsSend: async (p: SessionsSendParams) => {
      sent.sessions.push(p);
      return {
        status: "ok" as const,
        conversationId: "c1",
        reply: "pong",
        retryAttempts: 1,
        actualTurns: 2,
        announced: false,
      };
    },
  } as unknown as A2ARuntime;
  const host: ToolHost = { runtime: () => runtime };
  return { host, sent };
}

describe("the agents' tools", () => {
  it("are built only for a known agent: the sender comes from the tool context, never from the arguments", async () => {
    const { host, sent } = fakeRuntime();
    expect(createDiscordSendTool(host, {})).toBeNull();
    expect(createA2ASendTool(host, {})).toBeNull();
    const tool = createDiscordSendTool(host, { agentId: "ruda" });
    const result = await tool?.execute("call-1", { targetAgentId: "eden", message: "review PR #12?" });
    expect(sent.discord).toEqual([{ fromAgentId: "ruda", targetAgentId: "eden", message: "review PR #12?" }]);
    expect(result?.content[0]?.text).toContain("1500000000000000500");
    expect(result?.details).toMatchObject({ ok: true, threadId: "1500000000000000500" });
  });

  it("discord_send refuses a forged sender field, naming it", async () => {
    const { host, sent } = fakeRuntime();
    const tool = createDiscordSendTool(host, { agentId: "ruda" });
    const result = await tool?.execute("c", { targetAgentId: "eden", message: "x", fromAgentId: "eden" });
    expect(result?.details).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(result?.content[0]?.text).toMatch(/fromAgentId/);
    expect(sent.discord).toEqual([]);
  });

  it("a2a_send asks the target's session for this agent, from the caller's session, announcing where the caller talks", async () => {
    const { host, sent } = fakeRuntime();
    const tool = createA2ASendTool(host, {
      agentId: "ruda",
      sessionKey: "agent:ruda:discord:channel:1500000000000000010",
      deliveryContext: { channel: "discord", to: "channel:1500000000000000010" },
    });
    const result = await tool?.execute("c", { targetAgentId: "eden", message: "ping?", timeoutSeconds: 30 });
    expect(sent.sessions).toEqual([
      {
        targetSessionKey: "agent:eden:a2a:ruda",
        message: "ping?",
        requesterSessionKey: "agent:ruda:discord:channel:1500000000000000010",
        timeoutSeconds: 30,
        announceTarget: { channel: "discord", to: "channel:1500000000000000010" },
      },
    ]);
    expect(result?.content[0]?.text).toBe("a2a_send ok (c1): reply: pong");
    expect(a2aSessionKey("eden", "ruda")).toBe("agent:eden:a2a:ruda");
  });

  it("a2a_send names what is wrong with its arguments", async () => {
    const { host, sent } = fakeRuntime();
    const tool = createA2ASendTool(host, { agentId: "ruda" });
    const missing = await tool?.execute("c", { message: "hi" });
    expect(missing?.content[0]?.text).toMatch(/give targetAgentId or targetSessionKey/);
    const huge = await tool?.execute("c", { targetAgentId: "eden", message: "hi", timeoutSeconds: 1e9 });
    expect(huge?.content[0]?.text).toMatch(/timeoutSeconds/);
    expect(sent.sessions).toEqual([]);
  });

  it("say why they cannot run while the service is not running (a bad config, or not started yet)", async () => {
    const host: ToolHost = { runtime: () => ({ unavailable: "invalid config: maxAttempts" }) };
    const send = await createDiscordSendTool(host, { agentId: "ruda" })?.execute("c", {
      targetAgentId: "eden",
      message: "x",
    });
    expect(send?.content[0]?.text).toBe("discord_send: unavailable: invalid config: maxAttempts");
    const ask = await createA2ASendTool(host, { agentId: "ruda" })?.execute("c", {
      targetAgentId: "eden",
      message: "x",
    });
    expect(ask?.details).toMatchObject({ ok: false, code: "unavailable" });
  });
});

describe("answering a bot's mention that OpenClaw drops", () => {
  const message = {
    messageId: "1500000000000000700",
    channelId: "1500000000000000500",
    threadId: "1500000000000000500",
    authorId: "1500000000000000101",
    authorIsBot: true,
    content: "<@1500000000000000102> review?",
    mentionUserIds: ["1500000000000000102"],
    ts: 0,
  };

  function setup(reply: string | undefined, handles = false) {
    const posts: unknown[] = [];
    const runs: unknown[] = [];
    const subagent: SubagentRuntime = {
      run: async (p) => {
        runs.push(p);
        return { runId: "r1" };
      },
      waitForRun: async () =>
        reply === undefined
          ? { status: "ok", terminalReply: { disposition: "silent" } }
          : { status: "ok", terminalReply: { disposition: "visible", text: reply } },
      getSessionMessages: async () => ({ messages: [] }),
    };
    const answer = createThreadReplies({
      gateway: createSubagentGateway(subagent),
      discord: {
        sendMessage: async (p) => {
          posts.push(p);
          return { messageId: String(posts.length) };
        },
      },
      logger: { info() {}, warn() {}, error() {} },
      runTimeoutMs: 1000,
      openclawHandles: () => handles,
      agentOfBot: (id) => (id === "1500000000000000101" ? "ruda" : undefined),
    });
    return { answer, posts, runs };
  }

  it("runs the mentioned agent in OpenClaw's session for the thread and posts its reply as its bot, with a stable nonce", async () => {
    const { answer, posts, runs } = setup("LGTM <@1500000000000000101>");
    await answer({ agentId: "eden", sessionKey: "agent:eden:discord:channel:1500000000000000500", message });
    expect(runs).toEqual([
      {
        sessionKey: "agent:eden:discord:channel:1500000000000000500",
        message: "[Discord] ruda: <@1500000000000000102> review?",
        deliver: false,
        idempotencyKey: "a2a-statecharts:1500000000000000700:eden",
      },
    ]);
    expect(posts).toEqual([
      {
        asAgentId: "eden",
        channelId: "1500000000000000500",
        content: "LGTM <@1500000000000000101>",
        mentionUserIds: ["1500000000000000101"],
        nonce: replyNonce("1500000000000000700", "eden", 0),
      },
    ]);
    expect(replyNonce("1500000000000000700", "eden", 0)).toHaveLength(25);
  });

  it("leaves humans' messages, and bots' when OpenClaw's allowBots lets them through, to OpenClaw", async () => {
    const human = setup("x");
    await human.answer({ agentId: "eden", sessionKey: "s", message: { ...message, authorIsBot: false } });
    const allowed = setup("x", true);
    await allowed.answer({ agentId: "eden", sessionKey: "s", message });
    expect([...human.runs, ...allowed.runs, ...human.posts, ...allowed.posts]).toEqual([]);
  });

  it("posts nothing for a silent run or NO_REPLY", async () => {
    const silent = setup(undefined);
    await silent.answer({ agentId: "eden", sessionKey: "s", message });
    const noReply = setup(" NO_REPLY ");
    await noReply.answer({ agentId: "eden", sessionKey: "s", message });
    expect([...silent.posts, ...noReply.posts]).toEqual([]);
  });

  it("splits a long reply into Discord-sized parts", () => {
    const long = `${"a".repeat(1500)}\n${"b".repeat(1500)}`;
    expect(splitReply(long)).toEqual(["a".repeat(1500), "b".repeat(1500)]);
    expect(splitReply("c".repeat(4500)).map((p) => p.length)).toEqual([2000, 2000, 500]);
    expect(splitReply("   ")).toEqual([]);
  });
});
