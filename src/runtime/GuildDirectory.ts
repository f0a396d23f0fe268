import type { DiscordPort } from "./ports.js";

/**
 * The thread-creation bucket of every channel whose guild is unknown: one shared limit, so not
 * knowing a guild can never raise the rate (a bucket per unknown channel would).
 */
export const UNKNOWN_GUILD_BUCKET = "guild:?";

/** Channels remembered at most; the oldest are forgotten first (and asked again if needed). */
const MAX_CHANNELS = 10_000;

/**
 * Which guild a channel belongs to, for Discord's per-guild limit on thread creation (API.md §4).
 * Learnt from inbound messages, or asked once per channel of `DiscordPort.describeChannel` when the
 * port has it. In memory only: a channel never changes guild, and asking again after a restart is cheap.
 */
export class GuildDirectory {
  /** Channel id → guild id, or null for a channel Discord says is in no guild (a DM). */
  private readonly guilds = new Map<string, string | null>();
  /** Lookups in flight, shared so that requests for one channel keep their order. */
  private readonly asking = new Map<string, Promise<string | undefined>>();
  /** The last bucket asked for: each waits for the one before, so requests keep their order. */
  private lastBucket: Promise<unknown> = Promise.resolve();

  constructor(private readonly describeChannel?: NonNullable<DiscordPort["describeChannel"]>) {}

  /** Remembers that `channelId` (a channel or thread) is in `guildId`. */
  note(channelId: unknown, guildId: unknown): void {
    // Inbound messages come from a peer: ids that are not non-empty strings are ignored.
    if (typeof channelId !== "string" || channelId === "" || typeof guildId !== "string" || guildId === "")
      return;
    this.remember(channelId, guildId);
  }

  private remember(channelId: string, guildId: string | null): void {
    if (this.guilds.get(channelId) === guildId) return;
    this.guilds.delete(channelId);
    this.guilds.set(channelId, guildId);
    if (this.guilds.size > MAX_CHANNELS) this.guilds.delete(this.guilds.keys().next().value as string);
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
  guildOf(channelId: string): Promise<string | undefined> {
    const known = this.guilds.get(channelId);
    if (known !== undefined || this.guilds.has(channelId)) return Promise.resolve(known ?? undefined);
    const describe = this.describeChannel;
    if (describe === undefined) return Promise.resolve(undefined);
    const inFlight = this.asking.get(channelId);
    if (inFlight !== undefined) return inFlight;
    const asked = Promise.resolve()
      .then(() => describe({ channelId }))
      .then(
        (info) => {
          // A faulty port's answer is read defensively: anything but a guild id string is no guild.
          const guildId = typeof info?.guildId === "string" && info.guildId !== "" ? info.guildId : undefined;
          if (guildId === undefined) {
            // Answered, but with no guild: remembered as such, not asked again.
            this.remember(channelId, null);
            return undefined;
          }
          this.note(channelId, guildId);
          this.note(info.parentChannelId, guildId);
          return guildId;
        },
        // A failed lookup is not remembered: the next request asks again.
        () => undefined,
      )
      .finally(() => this.asking.delete(channelId));
    this.asking.set(channelId, asked);
    return asked;
  }
}
