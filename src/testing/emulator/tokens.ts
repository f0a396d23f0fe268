// Bot tokens of the Discord emulator. A token names the bot it logs in as:
//   "<userId>.emulator"   (what `emulatorToken(userId)` returns), or
//   "<base64(userId)>.<anything>"   (the shape of a real Discord bot token),
// optionally prefixed with "Bot ". Any other token is refused (REST 401, gateway close 4004).
import { isSnowflake } from "./snowflake.js";

/** The token that logs a discord.js Client in as the bot `userId` on the emulator. */
export function emulatorToken(userId: string): string {
  return `${userId}.emulator`;
}

/** The user id a token names, or null. */
export function userIdFromToken(token: string): string | null {
  const bare = token.replace(/^(Bot|Bearer)\s+/i, "").trim();
  const first = bare.split(".")[0] ?? "";
  if (isSnowflake(first)) return first;
  // Buffer.from skips what is not base64; it never throws.
  const decoded = Buffer.from(first, "base64").toString("utf8");
  return isSnowflake(decoded) ? decoded : null;
}
