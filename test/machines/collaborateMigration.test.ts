import { describe, expect, it } from "vitest";
import { migrateCollaborateSnapshot } from "../../src/machines/index.js";
import {
  invoked,
  v1Context as baseV1Context,
  type V1Parties,
  v1SendingInChannel,
  v1Snapshot,
} from "../support/collaborateV1.js";
import { type Clock, IDS, idempotentDiscord, MINUTE, restoreActor, T0 } from "../support/discordFakes.js";

// A collaborate snapshot of version 1 (a new thread opened from the mention, posted in the channel)
// becomes one of version 2 (a starter in the channel, the thread from it, the mention inside), or is
// left to the store's quarantine. Version 1 snapshots are written out here as the old machine stored them.

const TARGET = IDS.targetBot;
const MESSAGE = "인증 모듈 코드 리뷰 해줘";
const NAME = "[협업] 루다 → 이든 · 인증 모듈 코드 리뷰";
/** The version 1 mention, posted in the channel. */
const CHANNEL_MENTION = "1400000000000000400";

const PARTIES: V1Parties = {
  collaborationId: "collab-1",
  channelId: IDS.channel,
  targetBotId: TARGET,
  humanId: IDS.human,
  message: MESSAGE,
  startedAt: T0,
};
const v1Context = (extra: Record<string, unknown> = {}) =>
  baseV1Context(PARTIES, { threadName: "인증 모듈 코드 리뷰", ...extra });

const v1ThreadFromMention = invoked("createThread", {
  asAgentId: "ruda",
  channelId: IDS.channel,
  fromMessageId: CHANNEL_MENTION,
  name: NAME,
});

/** Runs a migrated snapshot on version 2 against an idempotent Discord, until it awaits the answer. */
async function resume(snapshot: unknown, event?: { type: "RETRY_DUE"; at: number }) {
  const clock: Clock = { now: T0 + MINUTE };
  const discord = idempotentDiscord(clock);
  const actor = restoreActor(discord.machine, snapshot);
  if (event !== undefined) actor.send(event);
  await new Promise<void>((resolve) => setImmediate(resolve));
  const context = actor.getSnapshot().context as Record<string, unknown>;
  const value = actor.getSnapshot().value;
  actor.stop();
  return { discord, value, context };
}

describe("migrateCollaborateSnapshot: version 1 → 2", () => {
  it("sending a new thread's mention in the channel: restarts at the starter, and the mention goes in the thread", async () => {
    const sending = v1SendingInChannel(PARTIES);
    const old = { ...sending, context: v1Context({ lastAt: T0 + 500 }) };
    const migrated = migrateCollaborateSnapshot(old, 1);
    expect(migrated).toMatchObject({
      value: "postingStarter",
      context: { mode: "new_thread", parentChannelId: IDS.channel, lastAt: T0 + 500, startedAt: T0 },
      children: { postStarter: { src: "postStarter" } },
    });
    expect(migrated).not.toHaveProperty("children.postMention");

    const { discord, value, context } = await resume(migrated);
    expect(value).toBe("awaitingResponse");
    const [starter, mention, ...more] = discord.messages;
    expect(more).toEqual([]);
    expect(starter).toMatchObject({
      channelId: IDS.channel,
      mentionUserIds: [],
      nonceKey: "collab-1:starter",
    });
    expect(discord.threads).toEqual([expect.objectContaining({ threadId: starter?.messageId, name: NAME })]);
    expect(mention).toMatchObject({ channelId: starter?.messageId, mentionUserIds: [TARGET] });
    expect(context).toMatchObject({ resolvedThreadId: starter?.messageId, messageId: mention?.messageId });
  });

  it("opening the thread from the channel mention: the mention becomes the starter, and is posted again in the thread", async () => {
    const old = v1Snapshot(
      "creatingThread",
      v1Context({ messageId: CHANNEL_MENTION, sentAt: T0 + 200, lastAt: T0 + 200 }),
      { createThread: v1ThreadFromMention },
    );
    const migrated = migrateCollaborateSnapshot(old, 1);
    expect(migrated).toMatchObject({
      value: "creatingThread",
      context: { starterMessageId: CHANNEL_MENTION },
      children: { createThread: v1ThreadFromMention },
    });
    expect(migrated).not.toHaveProperty("context.messageId");
    expect(migrated).not.toHaveProperty("context.sentAt");

    const { discord, value, context } = await resume(migrated);
    expect(value).toBe("awaitingResponse");
    expect(discord.threads).toEqual([expect.objectContaining({ threadId: CHANNEL_MENTION })]);
    expect(discord.messages).toEqual([
      expect.objectContaining({ channelId: CHANNEL_MENTION, nonceKey: "collab-1:mention" }),
    ]);
    expect(context).toMatchObject({ resolvedThreadId: CHANNEL_MENTION, sentAt: T0 + MINUTE });
  });

  it("retrying the thread after the channel mention: the retry opens the thread from it", async () => {
    const due = { event: "RETRY_DUE", at: T0 + 1_500 };
    const old = v1Snapshot(
      "retrying",
      v1Context({ messageId: CHANNEL_MENTION, sentAt: T0, lastAt: T0 + 500, due }),
    );
    const migrated = migrateCollaborateSnapshot(old, 1);
    expect(migrated).toMatchObject({
      value: "retrying",
      context: { starterMessageId: CHANNEL_MENTION, due },
    });
    const { discord, value } = await resume(migrated, { type: "RETRY_DUE", at: due.at });
    expect(value).toBe("awaitingResponse");
    expect(discord.threads.map((t) => t.fromMessageId)).toEqual([CHANNEL_MENTION]);
  });

  it("retrying the channel mention: unchanged, and the retry starts at the starter", async () => {
    const due = { event: "RETRY_DUE", at: T0 + 1_300 };
    const old = v1Snapshot("retrying", v1Context({ lastAt: T0 + 300, retries: 0, due }));
    expect(migrateCollaborateSnapshot(old, 1)).toEqual(old);
    const { discord, value } = await resume(old, { type: "RETRY_DUE", at: due.at });
    expect(value).toBe("awaitingResponse");
    expect(discord.messages.map((m) => m.nonceKey)).toEqual(["collab-1:starter", "collab-1:mention"]);
  });

  it("keeps what did not change: a tracked mention, an explicit thread's send, a finished collaboration", () => {
    const tracked = v1Snapshot(
      "awaitingResponse",
      v1Context({ resolvedThreadId: CHANNEL_MENTION, messageId: CHANNEL_MENTION, sentAt: T0 }),
    );
    const explicit = v1Snapshot(
      "sending",
      v1Context({
        mode: "explicit_thread",
        threadId: IDS.explicitThread,
        resolvedThreadId: IDS.explicitThread,
      }),
      { postMention: invoked("postMention", { channelId: IDS.explicitThread }) },
    );
    const failed = { ...v1Snapshot("failed", v1Context()), status: "done", output: { status: "failed" } };
    for (const snapshot of [tracked, explicit, failed]) {
      expect(migrateCollaborateSnapshot(snapshot, 1)).toEqual(snapshot);
    }
  });

  it("cannot convert other versions or shapes: the store quarantines them", () => {
    const tracked = v1Snapshot("awaitingResponse", v1Context({ resolvedThreadId: "1", sentAt: T0 }));
    expect(migrateCollaborateSnapshot(tracked, 0)).toBeUndefined();
    expect(migrateCollaborateSnapshot(tracked, 3)).toBeUndefined();
    expect(migrateCollaborateSnapshot("not a snapshot", 1)).toBeUndefined();
    expect(migrateCollaborateSnapshot({ value: "sending" }, 1)).toBeUndefined();
    // A version 1 thread creation without the mention it is opened from never existed.
    expect(migrateCollaborateSnapshot(v1Snapshot("creatingThread", v1Context()), 1)).toBeUndefined();
    // A context that no longer makes a collaboration.
    const broken = v1Snapshot("sending", v1Context({ collaborationId: "" }));
    expect(migrateCollaborateSnapshot(broken, 1)).toBeUndefined();
  });
});
