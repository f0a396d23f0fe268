import { describe, expect, it } from "vitest";
import type { SubagentRuntime, SubagentWaitResult } from "../src/openclawApi.js";
import { createSubagentGateway, lastAssistantText, toWaitStatus } from "../src/subagentGateway.js";

/** A subagent runtime that answers each wait from a queue and records the calls. */
function fakeSubagent(waits: Array<SubagentWaitResult | Error>, transcript: unknown[] = []) {
  const calls: Array<{ method: string; params: unknown }> = [];
  let runs = 0;
  const subagent: SubagentRuntime = {
    run: async (params) => {
      calls.push({ method: "run", params });
      runs += 1;
      return { runId: `run-${runs}` };
    },
    waitForRun: async (params) => {
      calls.push({ method: "waitForRun", params });
      const next = waits.shift();
      if (next === undefined) throw new Error("no wait scripted");
      if (next instanceof Error) throw next;
      return next;
    },
    getSessionMessages: async (params) => {
      calls.push({ method: "getSessionMessages", params });
      return { messages: transcript };
    },
  };
  return { subagent, calls };
}

describe("the GatewayPort on api.runtime.subagent", () => {
  it("maps each of OpenClaw's wait statuses to the runtime's", () => {
    expect(toWaitStatus({ status: "ok" })).toEqual({ status: "ok" });
    expect(toWaitStatus({ status: "error", error: "429 rate limit" })).toEqual({
      status: "error",
      error: "429 rate limit",
    });
    expect(toWaitStatus({ status: "timeout" })).toEqual({ status: "timeout" });
    // Still running when the wait ended: not a failure, the runtime waits again.
    expect(toWaitStatus({ status: "pending" })).toEqual({ status: "timeout" });
    expect(toWaitStatus({ status: "weird" } as unknown as SubagentWaitResult)).toEqual({
      status: "error",
      error: 'unknown run status "weird"',
    });
  });

  it("runs the agent without delivery, with the idempotency key and extra prompt", async () => {
    const { subagent, calls } = fakeSubagent([]);
    const port = createSubagentGateway(subagent);
    await expect(
      port.agent({
        sessionKey: "agent:eden:a2a:ruda",
        message: "hi",
        extraSystemPrompt: "Turn 1 of 3",
        idempotencyKey: "k1",
      }),
    ).resolves.toEqual({ runId: "run-1" });
    expect(calls[0]).toEqual({
      method: "run",
      params: {
        sessionKey: "agent:eden:a2a:ruda",
        message: "hi",
        deliver: false,
        idempotencyKey: "k1",
        extraSystemPrompt: "Turn 1 of 3",
      },
    });
  });

  it("reads the reply from the run's terminal receipt, without reading the transcript", async () => {
    const { subagent, calls } = fakeSubagent([
      { status: "ok", terminalReply: { disposition: "visible", text: "done" } },
    ]);
    const port = createSubagentGateway(subagent);
    const { runId } = await port.agent({ sessionKey: "s", message: "m", idempotencyKey: "k" });
    await expect(port.agentWait({ runId, timeoutMs: 1000 })).resolves.toEqual({ status: "ok" });
    await expect(port.readLatestAssistantReply({ sessionKey: "s" })).resolves.toBe("done");
    expect(calls.map((c) => c.method)).toEqual(["run", "waitForRun"]);
  });

  it("a silent run has no reply, even when the transcript holds an older one", async () => {
    const { subagent } = fakeSubagent(
      [{ status: "ok", terminalReply: { disposition: "silent" } }],
      [{ role: "assistant", content: "an older answer" }],
    );
    const port = createSubagentGateway(subagent);
    const { runId } = await port.agent({ sessionKey: "s", message: "m", idempotencyKey: "k" });
    await port.agentWait({ runId, timeoutMs: 1000 });
    await expect(port.readLatestAssistantReply({ sessionKey: "s" })).resolves.toBeUndefined();
  });

  it("without a receipt, reads the session's last assistant text", async () => {
    const { subagent } = fakeSubagent(
      [{ status: "ok" }],
      [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "text", text: "first" }] },
        {
          role: "assistant",
          content: [
            { type: "toolCall", name: "x" },
            { type: "text", text: "an" },
            { type: "text", text: "swer" },
          ],
        },
        { role: "toolResult", content: "ignored" },
      ],
    );
    const port = createSubagentGateway(subagent);
    const { runId } = await port.agent({ sessionKey: "s", message: "m", idempotencyKey: "k" });
    await port.agentWait({ runId, timeoutMs: 1000 });
    await expect(port.readLatestAssistantReply({ sessionKey: "s" })).resolves.toBe("answer");
  });

  it("a run OpenClaw does not know is not_found; any other failure of the wait is the gateway's (rethrown)", async () => {
    const { subagent } = fakeSubagent([new Error("unknown run: run-9"), new Error("socket hang up")]);
    const port = createSubagentGateway(subagent);
    await expect(port.agentWait({ runId: "run-9", timeoutMs: 10 })).resolves.toEqual({
      status: "not_found",
      error: "unknown run: run-9",
    });
    await expect(port.agentWait({ runId: "run-9", timeoutMs: 10 })).rejects.toThrow("socket hang up");
  });

  it("lastAssistantText skips empty and non-assistant messages", () => {
    expect(lastAssistantText([])).toBeUndefined();
    expect(
      lastAssistantText([null, 3, { role: "assistant", content: "  " }, { role: "assistant" }]),
    ).toBeUndefined();
    expect(
      lastAssistantText([
        { role: "assistant", content: " yes " },
        { role: "user", content: "no" },
      ]),
    ).toBe("yes");
  });
});

describe("a run OpenClaw ended in error", () => {
  it("is resent when the runtime waits on it again (its rate-limit retry), under a new idempotency key", async () => {
    const { subagent, calls } = fakeSubagent([
      { status: "error", error: "429 Rate limit reached; retry after 2s" },
      { status: "ok", terminalReply: { disposition: "visible", text: "deployed" } },
    ]);
    const port = createSubagentGateway(subagent);
    const { runId } = await port.agent({ sessionKey: "s", message: "status?", idempotencyKey: "k" });
    await expect(port.agentWait({ runId, timeoutMs: 10 })).resolves.toEqual({
      status: "error",
      error: "429 Rate limit reached; retry after 2s",
    });
    await expect(port.agentWait({ runId, timeoutMs: 10 })).resolves.toEqual({ status: "ok" });
    await expect(port.readLatestAssistantReply({ sessionKey: "s" })).resolves.toBe("deployed");
    expect(calls.map((c) => [c.method, c.params])).toEqual([
      ["run", { sessionKey: "s", message: "status?", deliver: false, idempotencyKey: "k" }],
      ["waitForRun", { runId: "run-1", timeoutMs: 10 }],
      ["run", { sessionKey: "s", message: "status?", deliver: false, idempotencyKey: "k:resend-1" }],
      ["waitForRun", { runId: "run-2", timeoutMs: 10 }],
    ]);
  });

  it("a run still going is waited on again, not resent", async () => {
    const { subagent, calls } = fakeSubagent([{ status: "pending" }, { status: "ok" }]);
    const port = createSubagentGateway(subagent);
    const { runId } = await port.agent({ sessionKey: "s", message: "m", idempotencyKey: "k" });
    await expect(port.agentWait({ runId, timeoutMs: 10 })).resolves.toEqual({ status: "timeout" });
    await expect(port.agentWait({ runId, timeoutMs: 10 })).resolves.toEqual({ status: "ok" });
    expect(calls.filter((c) => c.method === "run")).toHaveLength(1);
  });
});
