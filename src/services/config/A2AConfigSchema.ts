import { z } from "zod";

// Every duration is a positive whole number of milliseconds and every count a positive whole number;
// objects are strict so a misspelt key is an error rather than a silently ignored setting.
const durationMs = (fallback: number) => z.int().positive().default(fallback);
const count = (fallback: number) => z.int().positive().default(fallback);
const id = z.string().trim().min(1);

const AgentA2AOverrideSchema = z.strictObject({
  maxPingPongTurns: z.int().min(0).max(10).optional(),
  timeout: z
    .strictObject({
      maxWaitMs: z.int().positive().optional(),
      chunkMs: z.int().positive().optional(),
    })
    .optional(),
});

const AgentToAgentSchema = z.strictObject({
  maxPingPongTurns: z.int().min(0).max(10).default(5),
  autoTerminate: z.boolean().default(true),
  retry: z
    .strictObject({
      enabled: z.boolean().default(true),
      maxAttempts: z.int().min(1).max(10).default(3),
      baseBackoffMs: durationMs(2_000),
      maxBackoffMs: durationMs(60_000),
    })
    .prefault({}),
  timeout: z
    .strictObject({
      maxWaitMs: durationMs(300_000),
      chunkMs: durationMs(30_000),
    })
    .prefault({}),
  agents: z.record(id, AgentA2AOverrideSchema).optional(),
});

const DiscordSchema = z.strictObject({
  threadCommunication: z
    .strictObject({
      enabled: z.boolean().default(true),
      allowSiblingMentionsInThreads: z.boolean().default(true),
      allowHumanMentionsInThreads: z.boolean().default(true),
    })
    .prefault({}),
  a2aRetry: z
    .strictObject({
      enabled: z.boolean().default(true),
      responseTimeoutMs: durationMs(300_000),
      urgentResponseTimeoutMs: durationMs(60_000),
      maxAttempts: count(3),
      cleanupMaxAgeMs: durationMs(86_400_000),
      escalationMentionId: id.optional(),
      notifyOnFailure: z.boolean().default(true),
    })
    .prefault({}),
  collaboration: z
    .strictObject({
      defaultChannel: id.optional(),
      allowedChannels: z.array(id).default([]),
      allowedGuilds: z.array(id).optional(),
      threadReuseTTL: durationMs(21_600_000),
      observerHistoryLimit: count(50),
      observerHistoryTTL: durationMs(86_400_000),
      participantTTL: durationMs(86_400_000),
      maxMessageLength: count(2_000),
      loopGuard: z
        .strictObject({
          maxCollaboratePerPair: count(10),
          windowMs: durationMs(300_000),
          maxMessagesPerThread: count(6),
          threadWindowMs: durationMs(60_000),
        })
        .prefault({}),
      rateLimit: z
        .strictObject({
          threadCreationPerMinute: count(5),
          messagePerChannelPerSecond: count(5),
        })
        .prefault({}),
    })
    .prefault({}),
});

const AgentSchema = z.strictObject({
  discordBotId: id,
  name: z.string().trim().min(1).optional(),
});

export const A2AConfigSchema = z.strictObject({
  session: z.strictObject({ agentToAgent: AgentToAgentSchema.prefault({}) }).prefault({}),
  discord: DiscordSchema.prefault({}),
  agents: z.record(id, AgentSchema).default({}),
});

/** The config as the library uses it: every default filled in. */
export type A2AConfig = z.output<typeof A2AConfigSchema>;
/** The config as a user writes it: everything optional. */
export type A2AConfigInput = z.input<typeof A2AConfigSchema>;
