import { z } from "zod";

/**
 * A Discord id (a "snowflake"): an unsigned 64-bit integer written in decimal, so at most 20 digits.
 * Anything else can never equal the id of a message's author, channel or guild, and the setting
 * would silently match nothing.
 */
export const DISCORD_ID_PATTERN = /^\d{1,20}$/;

export const DISCORD_ID_TEXT = "a Discord id (a snowflake: 1 to 20 digits)";

export const discordId = z
  .string()
  .trim()
  .regex(DISCORD_ID_PATTERN, { error: `must be ${DISCORD_ID_TEXT}` });
