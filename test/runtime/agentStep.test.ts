import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import type { AgentStepOutput } from "../../src/machines/index.js";
import type { GatewayPort } from "../../src/index.js";
import { agentStepActor } from "../../src/runtime/agentStep.js";

type Wait = Awaited<ReturnType<GatewayPort["agentWait"]>>;

/** A gateway whose calls answer or throw as told. */
function gateway(p: { agent?: Error; wait?: Wait | Error; read?: string | Error }): GatewayPort {
  const answer = <T>(value: T | Error): Promise<T> =>
    value instanceof Error ? Promise.reject(value) : Promise.resolve(value);
  return {
    agent: () => answer(p.agent ?? { runId: "run-1" }),
    agentWait: () => answer(p.wait ?? { status: "ok" }),
    readLatestAssistantReply: () => answer(p.read ?? "네, 확인했습니다"),
  };
}

async function step(port: GatewayPort): Promise<AgentStepOutput> {
  const actor = createActor(agentStepActor({ gateway: () => port, now: () => 42 }), {
    input: { sessionKey: "agent:eden:main", message: "m", extraSystemPrompt: "p", idempotencyKey: "k" },
  });
  actor.start();
  return toPromise(actor);
}

describe("agentStepActor: a failed step is an answer with its error", () => {
  it("answers the reply when the run ends ok", async () => {
    expect(await step(gateway({}))).toEqual({ reply: "네, 확인했습니다", at: 42 });
  });

  it.each<[string, Parameters<typeof gateway>[0], AgentStepOutput["error"]]>([
    [
      "the run cannot start",
      { agent: new Error("ECONNREFUSED") },
      { source: "gateway", message: "ECONNREFUSED" },
    ],
    [
      "agentWait throws",
      { wait: new Error("socket hang up") },
      { source: "gateway", message: "socket hang up" },
    ],
    ["the run is not found", { wait: { status: "not_found" } }, { source: "wait", status: "not_found" }],
    [
      "the run fails",
      { wait: { status: "error", error: "429 rate limit" } },
      { source: "wait", status: "error", message: "429 rate limit" },
    ],
    ["the run times out", { wait: { status: "timeout" } }, { source: "wait", status: "timeout" }],
    [
      "the reply cannot be read",
      { read: new Error("history unavailable") },
      { source: "read", message: "history unavailable" },
    ],
  ])("answers the error when %s", async (_, port, error) => {
    expect(await step(gateway(port))).toEqual({ error, at: 42 });
  });
});
