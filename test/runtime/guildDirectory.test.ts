import { describe, expect, it } from "vitest";
import { GuildDirectory, UNKNOWN_GUILD_BUCKET } from "../../src/runtime/GuildDirectory.js";
import { ChannelDirectory } from "../../src/runtime/channelDirectory.js";
import type { ThreadState } from "../../src/runtime/ThreadState.js";
import type { DiscordChannelInfo } from "../../src/runtime/index.js";
import type { DiscordPort } from "../../src/index.js";

/** A directory whose channels Discord describes with `describeChannel` (none: the port cannot). */
function directory(describeChannel?: (p: { channelId: string }) => Promise<DiscordChannelInfo>) {
  const port = { describeChannel } as unknown as DiscordPort;
  return new GuildDirectory(new ChannelDirectory({} as ThreadState, port));
}

const GUILD = "1400000000000000001";
const CHANNEL = "1400000000000000500";
const OTHER = "1400000000000000501";
const THREAD = "1400000000000000600";

describe("GuildDirectory: the per-guild key of thread creation", () => {
  it("keys a channel by the guild its inbound messages named (a thread's parent too)", async () => {
    const guilds = directory();
    guilds.note(THREAD, GUILD);
    guilds.note(CHANNEL, GUILD);
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(`guild:${GUILD}`);
    expect(await guilds.threadCreationBucket(THREAD)).toBe(`guild:${GUILD}`);
  });

  it("channels whose guild is unknown share one bucket", async () => {
    const guilds = directory();
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(UNKNOWN_GUILD_BUCKET);
    expect(await guilds.threadCreationBucket(OTHER)).toBe(UNKNOWN_GUILD_BUCKET);
  });

  it("ignores ids that are not non-empty strings (a faulty peer's message)", async () => {
    const guilds = directory();
    guilds.note(CHANNEL, 42);
    guilds.note(undefined, GUILD);
    guilds.note(CHANNEL, "");
    expect(await guilds.guildOf(CHANNEL)).toBeUndefined();
  });

  it("asks describeChannel once per channel, even for lookups made at once, and learns the parent too", async () => {
    const asked: string[] = [];
    const guilds = directory(async ({ channelId }) => {
      asked.push(channelId);
      return { channelId, guildId: GUILD, parentChannelId: CHANNEL, isThread: true };
    });
    const keys = await Promise.all([
      guilds.threadCreationBucket(THREAD),
      guilds.threadCreationBucket(THREAD),
    ]);
    expect(keys).toEqual([`guild:${GUILD}`, `guild:${GUILD}`]);
    expect(await guilds.threadCreationBucket(THREAD)).toBe(`guild:${GUILD}`);
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(`guild:${GUILD}`);
    expect(asked).toEqual([THREAD]);
  });

  it("answers in the order asked, even when an earlier channel's lookup is slower", async () => {
    let release = () => {};
    const slow = new Promise<void>((resolve) => (release = resolve));
    const guilds = directory(async ({ channelId }) => {
      if (channelId === CHANNEL) await slow;
      return { channelId, guildId: GUILD, isThread: false };
    });
    const order: string[] = [];
    const first = guilds.threadCreationBucket(CHANNEL).then(() => order.push(CHANNEL));
    const second = guilds.threadCreationBucket(OTHER).then(() => order.push(OTHER));
    await new Promise<void>((resolve) => setImmediate(resolve));
    release();
    await Promise.all([first, second]);
    expect(order).toEqual([CHANNEL, OTHER]);
  });

  it("a failed lookup falls back to the shared bucket and is asked again next time", async () => {
    const answers: Array<() => Promise<DiscordChannelInfo>> = [
      () => Promise.reject(new Error("timeout")),
      () => Promise.resolve({ channelId: CHANNEL, guildId: GUILD, isThread: false }),
    ];
    const guilds = directory(() => (answers.shift() as () => Promise<DiscordChannelInfo>)());
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(UNKNOWN_GUILD_BUCKET);
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(`guild:${GUILD}`);
  });

  it("a channel Discord says is in no guild (or answers junk for) is remembered in the shared bucket", async () => {
    let asked = 0;
    const guilds = directory(async () => {
      asked += 1;
      return { guildId: 7 } as unknown as DiscordChannelInfo;
    });
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(UNKNOWN_GUILD_BUCKET);
    expect(await guilds.threadCreationBucket(CHANNEL)).toBe(UNKNOWN_GUILD_BUCKET);
    expect(asked).toBe(1);
  });

  it("shares Discord's answer with the allowlist check: a thread whose parent was looked up is not asked again", async () => {
    const asked: string[] = [];
    const port = {
      describeChannel: async ({ channelId }: { channelId: string }) => {
        asked.push(channelId);
        return { channelId, guildId: GUILD, parentChannelId: CHANNEL, isThread: true };
      },
    } as unknown as DiscordPort;
    const parents = new Map<string, string>();
    const threads = {
      parentOf: (t: string) => parents.get(t),
      setParent: (t: string, c: string) => parents.set(t, c),
    } as unknown as ThreadState;
    const channels = new ChannelDirectory(threads, port);
    expect(await channels.parentOf(THREAD)).toEqual({ parentChannelId: CHANNEL });
    const guilds = new GuildDirectory(channels);
    expect(await guilds.threadCreationBucket(THREAD)).toBe(`guild:${GUILD}`);
    expect(asked).toEqual([THREAD]);
  });
});
