// The smoke script's settings, from the environment: each bad value is a one-line error naming its variable.

/** The three bots, in the order DISCORD_SMOKE_TOKENS lists them. */
export const ROLES = ["requester", "target", "owner"];

const ROLE_TEXT = {
  requester: "the requester's bot",
  target: "the target's bot",
  owner: "the owner's bot",
};

/** `the target's bot`, for DISCORD_SMOKE_TOKENS[1]. */
export const roleOf = (index) => ROLE_TEXT[ROLES[index]];

/** A problem the person running the script can fix: printed as one line, exit 1. */
export class SmokeError extends Error {}

const SNOWFLAKE = /^\d{17,20}$/;
const DEFAULT_REMINDER_MS = 30_000;

/**
 * The settings, or undefined when neither DISCORD_SMOKE_TOKENS nor DISCORD_SMOKE_CHANNEL_ID is set (the
 * smoke test is skipped). Throws a SmokeError naming the variable that is wrong.
 */
export function readSettings(env) {
  const value = (name) => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === "" ? undefined : raw;
  };
  const tokensRaw = value("DISCORD_SMOKE_TOKENS");
  const channelId = value("DISCORD_SMOKE_CHANNEL_ID");
  if (tokensRaw === undefined && channelId === undefined) return undefined;
  if (tokensRaw === undefined)
    throw new SmokeError(
      "DISCORD_SMOKE_TOKENS is not set: three bot tokens, comma-separated (requester, target, owner)",
    );
  if (channelId === undefined)
    throw new SmokeError("DISCORD_SMOKE_CHANNEL_ID is not set: the id of a server text channel");
  const tokens = tokensRaw.split(",").map((token) => token.trim());
  if (tokens.length !== ROLES.length || tokens.includes(""))
    throw new SmokeError(
      `DISCORD_SMOKE_TOKENS must hold three bot tokens separated by commas (requester, target, owner); ` +
        `it holds ${tokens.filter((token) => token !== "").length}`,
    );
  const twin = tokens.findIndex((token, i) => tokens.indexOf(token) !== i);
  if (twin >= 0)
    throw new SmokeError(
      `DISCORD_SMOKE_TOKENS[${tokens.indexOf(tokens[twin])}] and [${twin}] are the same token`,
    );
  if (!SNOWFLAKE.test(channelId))
    throw new SmokeError(
      `DISCORD_SMOKE_CHANNEL_ID must be a Discord id (17 to 20 digits), got "${channelId}"`,
    );
  const humanId = value("DISCORD_SMOKE_HUMAN_ID");
  if (humanId !== undefined && !SNOWFLAKE.test(humanId))
    throw new SmokeError(
      `DISCORD_SMOKE_HUMAN_ID must be a Discord user id (17 to 20 digits), got "${humanId}"`,
    );
  const reminderRaw = value("DISCORD_SMOKE_REMINDER_MS");
  const reminderMs = reminderRaw === undefined ? DEFAULT_REMINDER_MS : Number(reminderRaw);
  if (!Number.isInteger(reminderMs) || reminderMs <= 0)
    throw new SmokeError(
      `DISCORD_SMOKE_REMINDER_MS must be a whole number of milliseconds above 0, got "${reminderRaw}"`,
    );
  const locale = value("DISCORD_SMOKE_LOCALE") ?? "ko";
  if (locale !== "ko" && locale !== "en")
    throw new SmokeError(`DISCORD_SMOKE_LOCALE must be ko or en, got "${locale}"`);
  const apiUrl = value("DISCORD_SMOKE_API_URL");
  if (apiUrl !== undefined && !URL.canParse(apiUrl))
    throw new SmokeError(`DISCORD_SMOKE_API_URL must be a URL, got "${apiUrl}"`);
  return {
    tokens,
    channelId,
    humanId,
    reminderMs,
    locale,
    apiUrl,
    fromSource: value("DISCORD_SMOKE_FROM_SOURCE") === "1",
  };
}
