import { isDiscordId } from "./discordIds.js";

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
