import { describe, expect, it } from "vitest";
import { decidePreflight, type PreflightContext } from "../../src/policies/index.js";
import { type InboundDiscordMessage } from "../../src/index.js";

const BOT = { ruda: "1400000000000000101", eden: "1400000000000000102", seum: "1400000000000000103" };
const HUMAN = "1400000000000000900";
const PARENT = "1400000000000000500";
const THREAD = "1400000000000000600";

function context(patch: Partial<PreflightContext> = {}): PreflightContext {
  return {
    threadCommunication: {
      enabled: true,
      allowSiblingMentionsInThreads: true,
      allowHumanMentionsInThreads: true,
    },
    allowedChannels: [PARENT],
    agentOfBot: new Map([
      [BOT.ruda, "ruda"],
      [BOT.eden, "eden"],
      [BOT.seum, "seum"],
    ]),
    participantsOf: (id) => (id === THREAD ? ["ruda", "eden"] : []),
    isSinkThread: () => false,
    parentOf: (id) => (id === THREAD ? PARENT : undefined),
    ...patch,
  };
}

function inThread(patch: Partial<InboundDiscordMessage>): InboundDiscordMessage {
  return {
    messageId: "1400000000000000700",
    channelId: THREAD,
    threadId: THREAD,
    authorId: BOT.ruda,
    authorIsBot: true,
    content: "",
    mentionUserIds: [],
    ts: 1,
    ...patch,
  };
}

describe("decidePreflight", () => {
  it("a sibling bot mentioning a bot in a thread: the mentioned bot handles it in the thread's session", () => {
    expect(decidePreflight(inThread({ mentionUserIds: [BOT.eden] }), context())).toEqual({
      action: "handle",
      agentId: "eden",
      sessionKey: `agent:eden:discord:channel:${THREAD}`,
      joinsThread: false,
    });
  });

  it("a mentioned bot that is not yet a participant joins the thread", () => {
    const decision = decidePreflight(inThread({ mentionUserIds: [BOT.seum] }), context());
    expect(decision).toMatchObject({ action: "handle", agentId: "seum", joinsThread: true });
  });

  it("several agents mentioned: the first decides, the others are listed", () => {
    const decision = decidePreflight(
      inThread({ authorId: HUMAN, authorIsBot: false, mentionUserIds: [BOT.seum, BOT.eden] }),
      context(),
    );
    expect(decision).toMatchObject({ action: "handle", agentId: "seum", alsoAgentIds: ["eden"] });
  });

  it("a sibling bot without a mention is observed, even in a thread whose participants could answer it", () => {
    // Handing an unmentioned bot message to the other participant is how two bots start answering each other forever.
    expect(decidePreflight(inThread({ content: "I think we are done here, anyone?" }), context())).toEqual({
      action: "observe",
    });
    expect(decidePreflight(inThread({ authorId: BOT.eden }), context())).toEqual({ action: "observe" });
  });

  it("a sibling bot in a thread nobody else takes part in is only observed", () => {
    expect(
      decidePreflight(
        inThread({
          channelId: "1400000000000000601",
          threadId: "1400000000000000601",
          parentChannelId: PARENT,
        }),
        context(),
      ),
    ).toEqual({ action: "observe" });
  });

  it("a bot mentioning only itself is its own message: dropped", () => {
    const lonely = inThread({
      channelId: "1400000000000000601",
      threadId: "1400000000000000601",
      parentChannelId: PARENT,
      mentionUserIds: [BOT.ruda],
    });
    expect(decidePreflight(lonely, context())).toEqual({ action: "drop", reason: "own_message" });
    expect(decidePreflight({ ...lonely, threadId: undefined, channelId: PARENT }, context())).toEqual({
      action: "drop",
      reason: "own_message",
    });
  });

  it("messages in sink (report) threads are never handled, by id or by the [리포트] name", () => {
    const m = inThread({ mentionUserIds: [BOT.eden] });
    expect(decidePreflight(m, context({ isSinkThread: () => true }))).toEqual({
      action: "drop",
      reason: "sink_thread",
    });
    expect(
      decidePreflight({ ...m, threadName: "[리포트] a2a.complete · 2026-02-26T00:00:00.000Z" }, context()),
    ).toEqual({
      action: "drop",
      reason: "sink_thread",
    });
  });

  it("a sink thread is checked first, by its id even when the message does not say it is a thread's", () => {
    const sink = (id: string) => id === THREAD;
    // As an adapter that only knows the channel reports it: no threadId, no parent, from a stranger.
    const bare = {
      ...inThread({ authorId: HUMAN, authorIsBot: false, mentionUserIds: [BOT.eden] }),
      threadId: undefined,
    };
    expect(decidePreflight(bare, context({ isSinkThread: sink }))).toEqual({
      action: "drop",
      reason: "sink_thread",
    });
    // Before the allowlists: a sink thread outside them is still a sink thread.
    expect(
      decidePreflight(
        inThread({ parentChannelId: "1400000000000000999" }),
        context({ isSinkThread: sink, allowedGuilds: ["1"] }),
      ),
    ).toEqual({ action: "drop", reason: "sink_thread" });
  });

  it("guild and channel allowlists are checked against the thread's parent", () => {
    const m = inThread({ mentionUserIds: [BOT.eden], guildId: "1" });
    expect(decidePreflight(m, context({ allowedGuilds: ["2"] }))).toEqual({
      action: "drop",
      reason: "guild_not_allowed",
    });
    expect(decidePreflight(m, context({ allowedChannels: ["999"] }))).toEqual({
      action: "drop",
      reason: "channel_not_allowed",
    });
    expect(decidePreflight(m, context({ allowedChannels: [] }))).toMatchObject({ action: "handle" });
  });

  it("allowlists fail closed: a DM when allowedGuilds is set, a thread whose parent is unknown", () => {
    const dm = inThread({ authorId: HUMAN, authorIsBot: false, mentionUserIds: [BOT.eden] });
    expect(decidePreflight(dm, context({ allowedGuilds: ["1400000000000000001"] }))).toEqual({
      action: "drop",
      reason: "dm_not_allowed",
    });
    const orphan = inThread({ channelId: "1400000000000000601", threadId: "1400000000000000601" });
    expect(decidePreflight({ ...orphan, mentionUserIds: [BOT.eden] }, context())).toEqual({
      action: "drop",
      reason: "unknown_parent",
    });
    // Without a channel allowlist there is nothing to check the parent against.
    expect(
      decidePreflight({ ...orphan, mentionUserIds: [BOT.eden] }, context({ allowedChannels: [] })),
    ).toMatchObject({ action: "handle" });
  });

  it("a human mentioning a bot is handled, in a thread and outside; without a mention only observed", () => {
    const human = inThread({ authorId: HUMAN, authorIsBot: false, mentionUserIds: [BOT.eden] });
    expect(decidePreflight(human, context())).toMatchObject({ action: "handle", agentId: "eden" });
    expect(decidePreflight({ ...human, threadId: undefined, channelId: PARENT }, context())).toMatchObject({
      action: "handle",
      sessionKey: `agent:eden:discord:channel:${PARENT}`,
    });
    expect(decidePreflight({ ...human, mentionUserIds: [] }, context())).toEqual({ action: "observe" });
    const off = context({
      threadCommunication: {
        enabled: true,
        allowSiblingMentionsInThreads: true,
        allowHumanMentionsInThreads: false,
      },
    });
    expect(decidePreflight(human, off)).toEqual({ action: "observe" });
  });

  it("with allowSiblingMentionsInThreads off, a sibling bot's thread message is only observed, mention or not", () => {
    const off = context({
      threadCommunication: {
        enabled: true,
        allowSiblingMentionsInThreads: false,
        allowHumanMentionsInThreads: true,
      },
    });
    expect(decidePreflight(inThread({ mentionUserIds: [BOT.eden] }), off)).toEqual({ action: "observe" });
    expect(decidePreflight(inThread({}), off)).toEqual({ action: "observe" });
  });

  it("with thread communication off, or from a foreign bot, messages are only observed", () => {
    const off = context({
      threadCommunication: {
        enabled: false,
        allowSiblingMentionsInThreads: true,
        allowHumanMentionsInThreads: true,
      },
    });
    expect(decidePreflight(inThread({ mentionUserIds: [BOT.eden] }), off)).toEqual({ action: "observe" });
    expect(
      decidePreflight(inThread({ authorId: "1400000000000000999", mentionUserIds: [BOT.eden] }), context()),
    ).toEqual({ action: "observe" });
  });
});
