import { z } from "zod";
import { DISCORD_ID_PATTERN } from "../collaboration/discordIds.js";

/** A Discord id setting: anything else would silently match no author, channel or guild. */
export const DISCORD_ID_TEXT = "a Discord id (a snowflake: 1 to 20 digits)";

export const discordId = z
  .string()
  .trim()
  .regex(DISCORD_ID_PATTERN, { error: `must be ${DISCORD_ID_TEXT}` });
