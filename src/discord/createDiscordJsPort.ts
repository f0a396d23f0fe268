import { ChannelType, Routes } from "discord.js";
import type { DiscordPort } from "../runtime/ports.js";

/**
 * What the port uses of a discord.js `Client`: its REST manager. Typed by shape, so any discord.js 14
 * `Client` fits, from `import` or `require` (discord.js ships separate typings for each).
 */
export interface DiscordJsRestClient {
  rest: {
    get(route: `/${string}`, options?: { query?: URLSearchParams }): Promise<unknown>;
    post(route: `/${string}`, options?: { body?: unknown }): Promise<unknown>;
  };
}

function clientOf(clients: Record<string, DiscordJsRestClient>, agentId: string): DiscordJsRestClient {
  const client = Object.hasOwn(clients, agentId) ? clients[agentId] : undefined;
  if (client === undefined) {
    throw new Error(
      `no discord.js Client for agent "${agentId}": pass it to createDiscordJsPort({ ${agentId}: client })`,
    );
  }
  return client;
}

/**
 * The DiscordPort over discord.js Clients, one per agent. It posts through each client's REST
 * manager, so channels missing from the cache work too, and lets discord.js errors (DiscordAPIError,
 * HTTPError, RateLimitError) propagate unchanged: the runtime classifies them and owns every retry.
 */
export function createDiscordJsPort(clients: Record<string, DiscordJsRestClient>): DiscordPort {
  return {
    async sendMessage({ asAgentId, channelId, content, mentionUserIds, nonce }) {
      const client = clientOf(clients, asAgentId);
      const created = (await client.rest.post(Routes.channelMessages(channelId), {
        body: {
          content,
          allowed_mentions: { parse: [], users: [...mentionUserIds] },
          nonce,
          enforce_nonce: true,
        },
      })) as { id: string };
      return { messageId: created.id };
    },

    async createThread({ asAgentId, channelId, name, fromMessageId }) {
      const client = clientOf(clients, asAgentId);
      const created = (
        fromMessageId === undefined
          ? await client.rest.post(Routes.threads(channelId), {
              body: { name, type: ChannelType.PublicThread },
            })
          : await client.rest.post(Routes.threads(channelId, fromMessageId), { body: { name } })
      ) as { id: string };
      return { threadId: created.id };
    },

    /** GET /channels/{id} as any agent's bot: every bot sees the channels the allowlists name. */
    async describeChannel({ channelId }) {
      const client = Object.values(clients)[0];
      if (client === undefined)
        throw new Error("createDiscordJsPort: no discord.js Client to describe a channel with");
      const channel = (await client.rest.get(Routes.channel(channelId))) as {
        id: string;
        type: number;
        guild_id?: string | null;
        parent_id?: string | null;
      };
      const isThread = THREAD_TYPES.has(channel.type);
      return {
        channelId: channel.id,
        ...(channel.guild_id ? { guildId: channel.guild_id } : {}),
        ...(isThread && channel.parent_id ? { parentChannelId: channel.parent_id } : {}),
        isThread,
      };
    },

    /** GET /channels/{id}/messages as the agent's bot (Discord lists no nonces; `timestamp` is ISO 8601). */
    async recentMessages({ asAgentId, channelId, limit }) {
      const client = clientOf(clients, asAgentId);
      const listed = (await client.rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ limit: String(limit) }),
      })) as Array<{
        id: string;
        author: { id: string };
        content: string;
        nonce?: unknown;
        timestamp: string;
      }>;
      return listed.map((m) => {
        const createdAt = Date.parse(m.timestamp);
        return {
          messageId: m.id,
          authorId: m.author.id,
          content: m.content,
          ...(typeof m.nonce === "string" ? { nonce: m.nonce } : {}),
          ...(Number.isNaN(createdAt) ? {} : { createdAt }),
        };
      });
    },
  };
}

const THREAD_TYPES: ReadonlySet<number> = new Set([
  ChannelType.AnnouncementThread,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
]);
