import { z } from "zod";
import { DISCORD_ID_PATTERN, type InboundDiscordMessage, InvalidInputError } from "../policies/index.js";
import type { DiscordSendParams, SessionsSendParams } from "./ports.js";

// The public inputs, checked before anything starts; each message says what the field must be.

/** The longest `timeoutSeconds` of `sessionsSend`: what one timer can wait (2^31−1 ms, about 24.8 days). */
export const MAX_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1_000);

const DISCORD_ID = "a Discord id (1 to 20 digits)";
const discordId = z.string({ error: DISCORD_ID }).regex(DISCORD_ID_PATTERN, { error: DISCORD_ID });
/** `""` stands for "not given", as the tools have always sent it. */
const discordIdOrEmpty = z
  .string({ error: `${DISCORD_ID} or ""` })
  .refine((id) => id === "" || DISCORD_ID_PATTERN.test(id), { error: `${DISCORD_ID} or ""` });
const text = z.string({ error: "a string" });
const nonEmptyText = z
  .string({ error: "a non-empty string" })
  .refine((s) => s.trim() !== "", { error: "a non-empty string" });
const flag = z.boolean({ error: "true or false" });

export const DiscordSendParamsSchema = z.object(
  {
    fromAgentId: nonEmptyText,
    targetAgentId: nonEmptyText,
    message: text,
    threadId: discordIdOrEmpty.optional(),
    channelId: discordIdOrEmpty.optional(),
    threadName: text.optional(),
    topicId: text.optional(),
    urgent: flag.optional(),
    idempotencyKey: text.optional(),
  },
  { error: "an object" },
) satisfies z.ZodType<DiscordSendParams>;

const SECONDS = `a number of seconds from 0 to ${MAX_TIMEOUT_SECONDS}`;

export const SessionsSendParamsSchema = z.object(
  {
    requesterSessionKey: text.optional(),
    targetSessionKey: nonEmptyText,
    message: nonEmptyText,
    routeKey: text.optional(),
    skipPingPong: flag.optional(),
    announceTarget: z
      .object({ channel: nonEmptyText, to: text.optional() }, { error: "{ channel, to? } or null" })
      .nullable()
      .optional(),
    timeoutSeconds: z
      .number({ error: SECONDS })
      .min(0, { error: SECONDS })
      .max(MAX_TIMEOUT_SECONDS, { error: SECONDS })
      .optional(),
  },
  { error: "an object" },
) satisfies z.ZodType<SessionsSendParams>;

const MESSAGE_TYPE = "a Discord message type (an integer ≥ 0: 0 for an ordinary message)";

export const InboundDiscordMessageSchema = z.object(
  {
    messageId: discordId,
    channelId: discordId,
    threadId: discordId.optional(),
    threadName: text.optional(),
    parentChannelId: discordId.optional(),
    guildId: discordId.optional(),
    authorId: discordId,
    authorIsBot: flag,
    content: text,
    mentionUserIds: z.array(discordId, { error: `an array of ${DISCORD_ID}s` }),
    ts: z
      .number({ error: "a finite number of epoch ms" })
      .nonnegative({ error: "a finite number of epoch ms" }),
    type: z
      .number({ error: MESSAGE_TYPE })
      .int({ error: MESSAGE_TYPE })
      .nonnegative({ error: MESSAGE_TYPE })
      .optional(),
  },
  { error: "an object" },
) satisfies z.ZodType<InboundDiscordMessage>;

/** `value` parsed (unknown keys dropped), or an InvalidInputError naming the first bad field. */
export function parsePublicInput<S extends z.ZodType>(
  method: string,
  schema: S,
  value: unknown,
): { ok: true; value: z.output<S> } | { ok: false; error: InvalidInputError } {
  let result: ReturnType<S["safeParse"]>;
  try {
    result = schema.safeParse(value) as ReturnType<S["safeParse"]>;
  } catch {
    // A getter or proxy that throws while being read.
    return { ok: false, error: new InvalidInputError(method, "input", "a plain object", value) };
  }
  if (result.success) return { ok: true, value: result.data as z.output<S> };
  const issue = result.error.issues[0];
  const path = issue?.path ?? [];
  return {
    ok: false,
    error: new InvalidInputError(
      method,
      path.length === 0 ? "input" : path.map(String).join("."),
      issue?.message ?? "valid",
      valueAt(value, path),
    ),
  };
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
