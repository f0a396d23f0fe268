// Collaborate snapshots as version 1 of the machine persisted them (a new thread was opened from the
// mention, posted in the parent channel), for the migration to version 2.

export interface V1Parties {
  collaborationId: string;
  channelId: string;
  targetBotId: string;
  humanId: string;
  message: string;
  startedAt: number;
}

/** A version 1 context of a new-thread collaboration, right after thread resolution. */
export function v1Context(p: V1Parties, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    collaborationId: p.collaborationId,
    fromAgentId: "ruda",
    targetAgentId: "eden",
    fromName: "루다",
    toName: "이든",
    targetBotId: p.targetBotId,
    message: p.message,
    channelId: p.channelId,
    urgent: false,
    allowedChannels: [p.channelId],
    maxMessageLength: 2000,
    loopGuard: { allowed: true },
    replyInThread: false,
    mention: {
      responseTimeoutMs: 300_000,
      urgentResponseTimeoutMs: 60_000,
      maxAttempts: 3,
      escalationMentionId: p.humanId,
      notifyOnFailure: true,
    },
    startedAt: p.startedAt,
    lastAt: p.startedAt,
    retries: 0,
    mode: "new_thread",
    parentChannelId: p.channelId,
    ...extra,
  };
}

export function v1Snapshot(value: string, context: object, children: Record<string, unknown> = {}) {
  return { status: "active", value, historyValue: {}, context, children };
}

/** A persisted invoked promise actor, still running. */
export function invoked(src: string, input: object) {
  return { snapshot: { status: "active", input }, src, syncSnapshot: false };
}

/** Version 1's `sending` of a new thread: the mention on its way to the channel. */
export function v1SendingInChannel(p: V1Parties) {
  return v1Snapshot("sending", v1Context(p), {
    postMention: invoked("postMention", {
      asAgentId: "ruda",
      channelId: p.channelId,
      content: `<@${p.targetBotId}> ${p.message}`,
      mentionUserIds: [p.targetBotId],
      nonceKey: `${p.collaborationId}:mention`,
    }),
  });
}
