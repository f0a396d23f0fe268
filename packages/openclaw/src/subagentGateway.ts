// The runtime's GatewayPort on OpenClaw's `api.runtime.subagent`: run an agent in a session, wait for
// the run, read its reply.
import type { GatewayPort } from "a2a-statecharts";
import type { SubagentRuntime, SubagentWaitResult } from "./openclawApi.js";

type WaitStatus = Awaited<ReturnType<GatewayPort["agentWait"]>>;

/**
 * OpenClaw's wait result in the runtime's words. `pending` is a run still going when the wait ended:
 * a `timeout` to the runtime, which waits again or resends as its retry policy says.
 */
export function toWaitStatus(result: SubagentWaitResult): WaitStatus {
  switch (result.status) {
    case "ok":
      return { status: "ok" };
    case "error":
      return { status: "error", ...(result.error === undefined ? {} : { error: result.error }) };
    case "timeout":
    case "pending":
      return { status: "timeout", ...(result.error === undefined ? {} : { error: result.error }) };
    default:
      return {
        status: "error",
        error: `unknown run status ${JSON.stringify((result as { status: unknown }).status)}`,
      };
  }
}

/** OpenClaw's answer to a wait for a run it does not know. */
const UNKNOWN_RUN = /\b(unknown|no such|not found)\b.*\brun\b|\brun\b.*\b(not found|unknown)\b/i;

/** The text of a transcript message: a string, or the text parts of a content array. */
function messageText(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((part): part is { type: "text"; text: string } => {
      const p = part as { type?: unknown; text?: unknown };
      return p.type === "text" && typeof p.text === "string";
    })
    .map((part) => part.text);
  return texts.length === 0 ? undefined : texts.join("");
}

/** The last assistant message of a transcript with text, or undefined. */
export function lastAssistantText(messages: readonly unknown[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if ((message as { role?: unknown } | null)?.role !== "assistant") continue;
    const text = messageText(message)?.trim();
    if (text) return text;
  }
  return undefined;
}

interface RunRequest {
  sessionKey: string;
  message: string;
  extraSystemPrompt?: string;
  idempotencyKey: string;
}

interface TrackedRun {
  request: RunRequest;
  /** The OpenClaw run now standing for the runtime's run (a resend replaces a failed one). */
  current: string;
  resends: number;
  /** The last wait saw the run end in error. */
  failed: boolean;
}

/**
 * A GatewayPort on `api.runtime.subagent`. The reply of a session is the terminal receipt of the last
 * run waited for there (`silent` or `empty`: no reply), else the session's last assistant message.
 *
 * The runtime retries a rate limit or an overload by waiting again on the same run, as for a gateway
 * that retries the model inside a run. An OpenClaw run ends at the model's error instead, so waiting
 * again on a run that ended in error resends it (a new run, its own idempotency key) and waits on that.
 */
export function createSubagentGateway(subagent: SubagentRuntime): GatewayPort {
  const runs = new Map<string, TrackedRun>();
  // sessionKey → the last finished run's reply; null: that run answered nothing.
  const receipts = new Map<string, string | null>();

  const start = async (request: RunRequest, idempotencyKey: string): Promise<string> => {
    const { runId } = await subagent.run({
      sessionKey: request.sessionKey,
      message: request.message,
      deliver: false,
      idempotencyKey,
      ...(request.extraSystemPrompt === undefined ? {} : { extraSystemPrompt: request.extraSystemPrompt }),
    });
    receipts.delete(request.sessionKey);
    return runId;
  };

  return {
    async agent(request) {
      const runId = await start(request, request.idempotencyKey);
      runs.set(runId, { request, current: runId, resends: 0, failed: false });
      return { runId };
    },
    async agentWait({ runId, timeoutMs }) {
      const run = runs.get(runId);
      if (run?.failed === true) {
        run.resends += 1;
        run.current = await start(run.request, `${run.request.idempotencyKey}:resend-${run.resends}`);
        run.failed = false;
      }
      let result: SubagentWaitResult;
      try {
        result = await subagent.waitForRun({ runId: run?.current ?? runId, timeoutMs });
      } catch (error) {
        if (error instanceof Error && UNKNOWN_RUN.test(error.message))
          return { status: "not_found", error: error.message };
        throw error;
      }
      if (run !== undefined) {
        run.failed = result.status === "error";
        if (result.status === "ok") {
          runs.delete(runId);
          const reply = result.terminalReply;
          if (reply !== undefined)
            receipts.set(run.request.sessionKey, reply.disposition === "visible" ? reply.text : null);
        }
      }
      return toWaitStatus(result);
    },
    async readLatestAssistantReply({ sessionKey }) {
      const receipt = receipts.get(sessionKey);
      if (receipt !== undefined) return receipt ?? undefined;
      const { messages } = await subagent.getSessionMessages({ sessionKey, limit: 20 });
      return lastAssistantText(messages);
    },
  };
}
