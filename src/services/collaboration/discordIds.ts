/** A Discord id (snowflake) as the API writes it: 17 to 20 decimal digits (a 64-bit number). */
export const DISCORD_ID_PATTERN = /^\d{17,20}$/;

/**
 * True when `id` is shaped like a Discord id. Ids from callers end up in session keys and API paths,
 * so anything else (`../x`, an empty string) is refused rather than passed on.
 */
export function isDiscordId(id: unknown): id is string {
  return typeof id === "string" && DISCORD_ID_PATTERN.test(id);
}
