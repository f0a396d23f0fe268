import { classifyDiscordFailure, type DiscordFailure, isDiscordId } from "../policies/index.js";
import { setNewest } from "./boundedMap.js";
import type { DiscordChannelInfo, DiscordPort } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

/** A thread's parent channel, or why it is not known (allowlists then refuse the thread). */
export type ParentLookup =
  { parentChannelId: string } | { unknown: string } | { failure: DiscordFailure; error: unknown };

/** Channels described at most, in memory; the oldest answer is forgotten first. */
const DESCRIBED_KEPT = 10_000;

/**
 * A thread's parent from the thread state, else from `describeChannel`, asked once per channel (the
 * parent then kept in the thread state). A retryable failure is not remembered; every other answer is.
 */
export class ChannelDirectory {
  private readonly described = new Map<string, Promise<DescribeAnswer>>();

  constructor(
    private readonly threads: ThreadState,
    private readonly port: DiscordPort | undefined,
  ) {}

  /** The parent of `threadId`, as far as the runtime and Discord know. */
  async parentOf(threadId: string): Promise<ParentLookup> {
    const known = this.threads.parentOf(threadId);
    if (known !== undefined) return { parentChannelId: known };
    const answer = await this.describe(threadId);
    if ("failure" in answer) return answer;
    // A faulty port may answer anything: only a well-formed thread with a Discord-id parent counts.
    const info = answer.info as Partial<DiscordChannelInfo> | null | undefined;
    if (typeof info !== "object" || info === null) {
      return { unknown: `the parent channel of thread ${threadId} is unknown` };
    }
    if (info.isThread !== true || !isDiscordId(info.parentChannelId)) {
      return { unknown: `channel ${threadId} is not a thread` };
    }
    this.threads.setParent(threadId, info.parentChannelId);
    return { parentChannelId: info.parentChannelId };
  }

  /** What Discord says of a channel (undefined when the port cannot describe channels). */
  describe(channelId: string): Promise<DescribeAnswer> {
    const cached = this.described.get(channelId);
    if (cached !== undefined) return cached;
    const asking = this.ask(channelId);
    setNewest(this.described, channelId, asking, DESCRIBED_KEPT);
    void asking.then((answer) => {
      if ("failure" in answer && answer.failure.retryable) this.described.delete(channelId);
    });
    return asking;
  }

  private async ask(channelId: string): Promise<DescribeAnswer> {
    const port = this.port;
    if (port?.describeChannel === undefined) return { info: undefined };
    try {
      return { info: await port.describeChannel({ channelId }) };
    } catch (error) {
      return { failure: classifyDiscordFailure(error), error };
    }
  }
}

export type DescribeAnswer =
  { info: DiscordChannelInfo | undefined } | { failure: DiscordFailure; error: unknown };
