import { z } from "zod";
import type { A2ARuntime, DiscordSendResult } from "../runtime/index.js";
import { ko } from "../policies/messages/ko.js";
import { renderMessage } from "../policies/messages/messageCatalog.js";
import type { MessageCatalog, PlainMessageKey } from "../policies/messages/messageKeys.js";

/** The arguments an agent gives `discord_send`. */
export const DiscordSendArgsSchema = z.strictObject({
  targetAgentId: z.string().trim().min(1).describe("The agent to ask (its id in the gateway config)."),
  message: z.string().describe("What to ask or tell; the target is mentioned in front of it."),
  threadId: z.string().min(1).optional().describe("Continue in this thread."),
  channelId: z.string().min(1).optional().describe("Open the thread in this channel (it must be allowed)."),
  threadName: z.string().min(1).optional().describe("The new thread's topic."),
  topicId: z.string().min(1).optional().describe("Keeps one thread per topic for the same pair of agents."),
  urgent: z.boolean().optional().describe("Remind sooner (urgentResponseTimeoutMs)."),
});
/** The arguments of `discord_send`, once checked. */
export type DiscordSendArgs = z.infer<typeof DiscordSendArgsSchema>;

/** The `discord_send` tool as a gateway registers it: name, description and JSON schema of its arguments. */
export const discordSendTool = {
  name: "discord_send",
  description:
    "Send a message to another agent in a Discord thread and return at once with the thread id. " +
    "The reply comes later in the thread; an unanswered mention is reminded and then escalated to a human.",
  inputSchema: z.toJSONSchema(DiscordSendArgsSchema),
} as const;

/** What `discord_send` answers the agent: `text` for the model, and the ids for the gateway. */
export type DiscordSendToolResult =
  | { ok: true; text: string; threadId: string; messageId: string; mentionId: string }
  | { ok: false; code: string; text: string };

/** Options of `handleDiscordSend`. */
export interface DiscordSendToolOptions {
  /** The texts to answer in; default: the runtime's own (its configured `locale`), else Korean. */
  messages?: MessageCatalog;
}

/** Runs `discord_send`: answers once the mention is posted (never waits for the reply), or says why not. */
export async function handleDiscordSend(
  runtime: Pick<A2ARuntime, "discordSend"> & Partial<Pick<A2ARuntime, "messages">>,
  fromAgentId: string,
  args: unknown,
  options: DiscordSendToolOptions = {},
): Promise<DiscordSendToolResult> {
  const messages = options.messages ?? runtime.messages ?? ko;
  const parsed = DiscordSendArgsSchema.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`);
    return { ok: false, code: "invalid_arguments", text: `discord_send: ${problems.join("; ")}` };
  }
  const a = parsed.data;
  const result: DiscordSendResult = await runtime.discordSend({
    fromAgentId,
    targetAgentId: a.targetAgentId,
    message: a.message,
    ...(a.threadId === undefined ? {} : { threadId: a.threadId }),
    ...(a.channelId === undefined ? {} : { channelId: a.channelId }),
    ...(a.threadName === undefined ? {} : { threadName: a.threadName }),
    ...(a.topicId === undefined ? {} : { topicId: a.topicId }),
    ...(a.urgent === undefined ? {} : { urgent: a.urgent }),
  });
  if (result.status === "rejected") {
    return {
      ok: false,
      code: result.error.code,
      text: renderMessage(messages, "discordSendRejected", {
        code: result.error.code,
        reason: rejectionReason(messages, result.error),
      }),
    };
  }
  return {
    ok: true,
    text: renderMessage(messages, "discordSendSent", { threadId: result.threadId }),
    threadId: result.threadId,
    messageId: result.messageId,
    mentionId: result.mentionId,
  };
}

// The reasons the runtime gives in its own words, in the catalog's language. The others (Discord's
// words, a field named in an invalid input, an unknown sender or target) are passed on as they are.
const REJECTION_REASONS: Readonly<Record<string, PlainMessageKey>> = {
  empty_message: "rejectedEmptyMessage",
  message_too_long: "rejectedMessageTooLong",
  channel_not_allowed: "rejectedChannelNotAllowed",
  loop_guard: "rejectedLoopGuard",
  reply_in_thread: "rejectedReplyInThread",
  sink_thread: "rejectedSinkThread",
};

function rejectionReason(messages: MessageCatalog, error: { code: string; message: string }): string {
  const key = Object.hasOwn(REJECTION_REASONS, error.code) ? REJECTION_REASONS[error.code] : undefined;
  return key === undefined ? error.message : renderMessage(messages, key, {});
}
