import { Client, Events, GatewayIntentBits, Routes } from "discord.js";
import type { A2AConfigInput } from "../../policies/index.js";
import { emulatorToken, startDiscordEmulator } from "../../testing/index.js";

/** The demo's three agents, each with its own bot. */
export const AGENT_NAMES = { ruda: "루다", eden: "이든", seum: "세움" } as const;
export type DemoAgentId = keyof typeof AGENT_NAMES;
export const AGENT_IDS = Object.keys(AGENT_NAMES) as DemoAgentId[];

const EMULATED = {
  bots: { ruda: "1400000000000000101", eden: "1400000000000000102", seum: "1400000000000000103" },
  human: { id: "1400000000000000900", name: "병욱" },
  channel: { id: "1400000000000000500", name: "협업" },
};

/** Who is where: the agents' bot ids, the collaboration channel and the human to escalate to. */
export interface Cast {
  botIds: Record<DemoAgentId, string>;
  channelId: string;
  humanId: string | undefined;
  clients: Record<DemoAgentId, Client<true>>;
  /** Credentials a second gateway process needs to act as `agentId` (a token; an API url when emulated). */
  credentials(agentId: DemoAgentId): { token: string; apiUrl?: string };
  /** Posts as the human; only the emulator can. */
  postAsHuman: ((channelId: string, content: string) => Promise<void>) | undefined;
  /** A thread's or channel's messages, oldest first, read over REST. */
  messagesIn(
    channelId: string,
  ): Promise<Array<{ id: string; authorId: string; content: string; mentionIds: string[] }>>;
  describe: string;
  close(): Promise<void>;
}

/** Real Discord: one bot token per agent, the channel to collaborate in, and the human (optional). */
export interface RealDiscordTarget {
  tokens: Record<DemoAgentId, string>;
  channelId: string;
  humanId?: string;
  /** discord.js `rest.api` override; for testing this path against the emulator. */
  apiUrl?: string;
}

/** The demo's runtime config. At `speed` × real time a Discord call still gets 10 s of real time. */
export function demoConfig(
  cast: Pick<Cast, "botIds" | "channelId" | "humanId">,
  responseTimeoutMs: number,
  speed: number,
): A2AConfigInput {
  const agents = Object.fromEntries(
    AGENT_IDS.map((id) => [id, { discordBotId: cast.botIds[id], name: AGENT_NAMES[id] }]),
  );
  return {
    agents,
    discord: {
      a2aRetry: {
        responseTimeoutMs,
        ...(cast.humanId === undefined ? {} : { escalationMentionId: cast.humanId }),
      },
      collaboration: {
        defaultChannel: cast.channelId,
        allowedChannels: [cast.channelId],
        requestTimeoutMs: Math.ceil(10_000 * speed),
      },
    },
  };
}

/** A strict discord.js client logged in with `token` (to `apiUrl` instead of discord.com when given). */
export async function loginBot(token: string, apiUrl: string | undefined): Promise<Client<true>> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    // Strict, retrying nothing itself: the machines own every retry of a 5xx or a 429.
    rest: { ...(apiUrl === undefined ? {} : { api: apiUrl }), retries: 0, rejectOnRateLimit: ["/channels"] },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(token);
    await ready;
  } catch (error) {
    await client.destroy();
    throw error;
  }
  return client as Client<true>;
}

/** Real Discord (or anything speaking its API at `apiUrl`): the bots log in with their tokens. */
export async function realCast(target: RealDiscordTarget): Promise<Cast> {
  const logins = AGENT_IDS.map(async (id) => {
    const client = await loginBot(target.tokens[id], target.apiUrl).catch((error: unknown) => {
      throw new Error(`the ${id} bot could not log in to Discord: ${(error as Error).message}`, {
        cause: error,
      });
    });
    return [id, client] as const;
  });
  const clients = Object.fromEntries(await Promise.all(logins)) as Record<DemoAgentId, Client<true>>;
  const api = target.apiUrl === undefined ? {} : { apiUrl: target.apiUrl };
  return {
    clients,
    channelId: target.channelId,
    humanId: target.humanId,
    botIds: Object.fromEntries(AGENT_IDS.map((id) => [id, clients[id].user.id])) as Cast["botIds"],
    describe: target.apiUrl === undefined ? "Discord" : `the Discord API at ${target.apiUrl}`,
    credentials: (id) => ({ token: target.tokens[id], ...api }),
    postAsHuman: undefined,
    async messagesIn(channelId) {
      const raw = (await clients.ruda.rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ limit: "100" }),
      })) as Array<{ id: string; author: { id: string }; content: string; mentions?: Array<{ id: string }> }>;
      return raw
        .map((m) => ({
          id: m.id,
          authorId: m.author.id,
          content: m.content,
          mentionIds: (m.mentions ?? []).map((u) => u.id),
        }))
        .reverse();
    },
    async close() {
      await Promise.all(AGENT_IDS.map((id) => clients[id].destroy()));
    },
  };
}

/** The bundled Discord emulator on 127.0.0.1, running on demo time, as real Discord with the human able to post. */
export async function emulatedCast(clock: { now: () => number }): Promise<Cast> {
  const emulator = await startDiscordEmulator({
    channels: [EMULATED.channel],
    users: [
      ...AGENT_IDS.map((id) => ({ id: EMULATED.bots[id], name: AGENT_NAMES[id], bot: true })),
      { ...EMULATED.human, bot: false },
    ],
    now: clock.now,
    // Demo time runs faster than the real time discord.js keeps its buckets by: no one clock could
    // count Discord's rate limits for both.
    rateLimits: false,
  });
  try {
    const tokens = Object.fromEntries(AGENT_IDS.map((id) => [id, emulatorToken(EMULATED.bots[id])]));
    const cast = await realCast({
      tokens: tokens as Record<DemoAgentId, string>,
      channelId: EMULATED.channel.id,
      humanId: EMULATED.human.id,
      apiUrl: emulator.apiUrl,
    });
    return {
      ...cast,
      describe: `the bundled Discord emulator at ${emulator.apiUrl}`,
      postAsHuman: async (channelId, content) => {
        await emulator.postAsUser({ userId: EMULATED.human.id, channelId, content });
      },
      async close() {
        await cast.close();
        await emulator.close();
      },
    };
  } catch (error) {
    await emulator.close();
    throw error;
  }
}
