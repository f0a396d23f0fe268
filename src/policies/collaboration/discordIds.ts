/** A Discord id (snowflake): up to 20 decimal digits; short ones allowed for sample configs' placeholders. */
export const DISCORD_ID_PATTERN = /^\d{1,20}$/;

/** `<@id>`, `<@!id>` or `<@&id>` (group 1: the `@…id`); a new global pattern each call (it keeps state). */
export function mentionMarkup(): RegExp {
  return /<(@[!&]?\d+)>/g;
}

/** Whether `id` is shaped like a Discord id: caller ids end up in session keys and API paths (`../x`). */
export function isDiscordId(id: unknown): id is string {
  return typeof id === "string" && DISCORD_ID_PATTERN.test(id);
}

/** The Discord channel of an announce target (`to`, minus a `channel:` prefix); undefined if not Discord. */
export function announceChannelId(target: { channel: string; to?: string } | null): string | undefined {
  if (target?.channel !== "discord" || !target.to) return undefined;
  return target.to.replace(/^channel:/, "");
}

/** Whether `channelId` is a Discord id in `allowedChannels`: strict, an empty list allows none. */
export function announceChannelAllowed(channelId: string, allowedChannels: readonly string[]): boolean {
  return isDiscordId(channelId) && allowedChannels.includes(channelId);
}
