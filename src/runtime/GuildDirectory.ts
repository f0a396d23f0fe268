import { setNewest } from "./boundedMap.js";
import type { ChannelDirectory } from "./channelDirectory.js";
import type { DiscordChannelInfo } from "./ports.js";

/** One bucket for every unknown guild's channels: not knowing a guild never raises the rate. */
export const UNKNOWN_GUILD_BUCKET = "guild:?";

/** Channels remembered at most; the oldest are forgotten first (and asked again if needed). */
const MAX_CHANNELS = 10_000;

/**
 * Each channel's guild, for the per-guild thread-creation limit: from inbound messages or Discord's
 * answer. In memory only: a channel never changes guild.
 */
export class GuildDirectory {
  /** Channel id → guild id, as inbound messages and Discord's answers named it. */
  private readonly guilds = new Map<string, string>();
  /** The last bucket asked for: each waits for the one before, so requests keep their order. */
  private lastBucket: Promise<unknown> = Promise.resolve();

  constructor(private readonly channels: Pick<ChannelDirectory, "describe">) {}

  /** Remembers that `channelId` (a channel or thread) is in `guildId`. */
  note(channelId: unknown, guildId: unknown): void {
    // Inbound messages come from a peer: ids that are not non-empty strings are ignored.
    if (typeof channelId !== "string" || channelId === "" || typeof guildId !== "string" || guildId === "")
      return;
    setNewest(this.guilds, channelId, guildId, MAX_CHANNELS);
  }

  /** The rate-limit key of thread creation in `channelId`: its guild's, or the shared unknown one. */
  threadCreationBucket(channelId: string): Promise<string> {
    const bucket = this.lastBucket
      .then(() => this.guildOf(channelId))
      .then((guildId) => (guildId === undefined ? UNKNOWN_GUILD_BUCKET : `guild:${guildId}`));
    this.lastBucket = bucket;
    return bucket;
  }

  /** The guild of `channelId`, if known or if Discord says; never rejects. */
  async guildOf(channelId: string): Promise<string | undefined> {
    const known = this.guilds.get(channelId);
    if (known !== undefined) return known;
    const answer = await this.channels.describe(channelId);
    // A faulty port's answer is read defensively: anything but a guild id string is no guild.
    const info =
      "info" in answer ? (answer.info as Partial<DiscordChannelInfo> | null | undefined) : undefined;
    const guildId = typeof info?.guildId === "string" && info.guildId !== "" ? info.guildId : undefined;
    if (guildId === undefined) return undefined;
    this.note(channelId, guildId);
    this.note(info?.parentChannelId, guildId);
    return guildId;
  }
}
