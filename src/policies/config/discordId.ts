import { z } from "zod";
import { DISCORD_ID_PATTERN } from "../collaboration/discordIds.js";

/**
 * A Discord id setting. Anything not shaped like one can never equal the id of a message's author,
 * channel or guild, and the setting would silently match nothing.
 */
export const DISCORD_ID_TEXT = "a Discord id (a snowflake: 1 to 20 digits)";

export const discordId = z
  .string()
  .trim()
  .regex(DISCORD_ID_PATTERN, { error: `must be ${DISCORD_ID_TEXT}` });
