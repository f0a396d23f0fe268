/**
 * A Discord id (snowflake) as the API writes it: an unsigned 64-bit number in decimal, so 1 to 20 digits
 * (real ones have 17 to 20; sample configs use short placeholders, which must load).
 */
export const DISCORD_ID_PATTERN = /^\d{1,20}$/;

/**
 * A user or role mention as Discord writes it in a message: `<@id>`, `<@!id>` (by nickname), `<@&id>`
 * (a role); group 1 is the `@…id` inside. A new global pattern each call (it keeps match state).
 */
export function mentionMarkup(): RegExp {
  return /<(@[!&]?\d+)>/g;
}

/**
 * True when `id` is shaped like a Discord id. Ids from callers end up in session keys and API paths,
 * so anything else (`../x`, an empty string) is refused rather than passed on.
 */
export function isDiscordId(id: unknown): id is string {
  return typeof id === "string" && DISCORD_ID_PATTERN.test(id);
}

/**
 * The Discord channel an announce target posts to: its `to`, with an optional `channel:` prefix, when
 * the target's channel is `discord`. Undefined for any other target (nothing is posted to Discord).
 */
export function announceChannelId(target: { channel: string; to?: string } | null): string | undefined {
  if (target?.channel !== "discord" || !target.to) return undefined;
  return target.to.replace(/^channel:/, "");
}

/**
 * Whether an announcement may be posted in `channelId`: a well-formed Discord id listed in
 * `discord.collaboration.allowedChannels`. The list is strict, as for collaborations: empty allows none.
 */
export function announceChannelAllowed(channelId: string, allowedChannels: readonly string[]): boolean {
  return isDiscordId(channelId) && allowedChannels.includes(channelId);
}
