import { ChannelType, Routes } from "discord.js";
import type { DiscordPort, DiscordRateLimit } from "../runtime/ports.js";

/**
 * What the port uses of a discord.js `Client`: its REST manager. Typed by shape, so any discord.js 14
 * `Client` fits, from `import` or `require` (discord.js ships separate typings for each).
 */
export interface DiscordJsRestClient {
  rest: {
    get(route: `/${string}`, options?: { query?: URLSearchParams }): Promise<unknown>;
    /** A request through discord.js's queue and rate-limit handling, answered with the raw response. */
    queueRequest(request: {
      /** "POST" (discord.js's `RequestMethod.Post`): a string, so these types need no discord.js. */
      method: string;
      fullRoute: `/${string}`;
      body?: unknown;
    }): Promise<{ headers: { get(name: string): string | null }; json(): Promise<unknown> }>;
    /** discord.js waits `offset` ms past a bucket's reset (default 50); so must the runtime. */
    readonly options?: { readonly offset?: number | ((route: string) => number) };
  };
}

/** POSTs through discord.js; the reset it reports includes the client's `offset`, so the runtime never sends early. */
async function post<T>(
  client: DiscordJsRestClient,
  fullRoute: `/${string}`,
  bucketRoute: string,
  body: unknown,
): Promise<{ created: T; rateLimit?: DiscordRateLimit }> {
  const response = await client.rest.queueRequest({ method: "POST", fullRoute, body });
  const created = (await response.json()) as T;
  const remaining = Number(response.headers.get("x-ratelimit-remaining") ?? Number.NaN);
  const resetAfterMs = Number(response.headers.get("x-ratelimit-reset-after") ?? Number.NaN) * 1_000;
  if (!Number.isFinite(remaining) || !Number.isFinite(resetAfterMs) || resetAfterMs < 0) return { created };
  const offset = client.rest.options?.offset;
  const offsetMs = typeof offset === "function" ? offset(bucketRoute) : (offset ?? DISCORD_JS_OFFSET_MS);
  return {
    created,
    rateLimit: { remaining, resetAfterMs: Math.ceil(resetAfterMs + Math.max(0, Number(offsetMs) || 0)) },
  };
}

/** discord.js's default `rest.offset`. */
const DISCORD_JS_OFFSET_MS = 50;

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
 * The DiscordPort over one discord.js Client per agent, through its REST manager (uncached channels work).
 * discord.js errors propagate unchanged: the runtime owns every retry, and waits on each post's bucket.
 */
export function createDiscordJsPort(clients: Record<string, DiscordJsRestClient>): DiscordPort {
  return {
    async sendMessage({ asAgentId, channelId, content, mentionUserIds, nonce }) {
      const { created, rateLimit } = await post<{ id: string }>(
        clientOf(clients, asAgentId),
        Routes.channelMessages(channelId),
        "/channels/:id/messages",
        {
          content,
          allowed_mentions: { parse: [], users: [...mentionUserIds] },
          nonce,
          enforce_nonce: true,
        },
      );
      return { messageId: created.id, ...(rateLimit && { rateLimit }) };
    },

    async createThread({ asAgentId, channelId, name, fromMessageId }) {
      const [bucketRoute, body] =
        fromMessageId === undefined
          ? ["/channels/:id/threads", { name, type: ChannelType.PublicThread }]
          : ["/channels/:id/messages/:id/threads", { name }];
      const route = Routes.threads(channelId, fromMessageId);
      const { created, rateLimit } = await post<{ id: string }>(
        clientOf(clients, asAgentId),
        route,
        bucketRoute,
        body,
      );
      return { threadId: created.id, ...(rateLimit && { rateLimit }) };
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
