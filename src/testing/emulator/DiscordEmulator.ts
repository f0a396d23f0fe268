// A local Discord API v10 server (REST under /api/v10, a JSON gateway at /gateway, one 127.0.0.1 origin)
// for several bots at once; humans post through `postAsUser`. Not emulated: attachments, message edits
// and deletes, humans' reactions and the other reaction routes, custom emojis, roles, permission
// overwrites (`denied` is enforced, not shown), interactions (commands are stored, never invoked), the
// caps and daily quota on commands, the invalid-request limit, the thread starter message (type 21),
// type 18 for a thread started from an "older" message, and "X added Y" when a mention adds a member
// (Discord documents neither).
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type EmulatorFault, FaultQueue } from "./faults.js";
import { Gateway } from "./gateway.js";
import { type EmulatorRateLimits, RateLimitBuckets } from "./rateLimits.js";
import { API_PREFIX, handleRest, type RestExchange } from "./restServer.js";
import { type EmulatorMessage, EmulatorState, type EmulatorUser } from "./state.js";

/** The emulated guild: its channels, its users (bots and humans), and the clock that stamps messages. */
export interface DiscordEmulatorOptions {
  /** 0 or omitted: any free port. */
  port?: number;
  guildId?: string;
  guildName?: string;
  /** Text channels; `denied`: user ids without Send Messages / Create Threads there. */
  channels: Array<{ id: string; name: string; denied?: string[] }>;
  users: EmulatorUser[];
  /** Gateway heartbeat interval announced in HELLO (default 41 250 ms). */
  heartbeatIntervalMs?: number;
  /** The clock of message ids (snowflakes), so of their timestamps, and of rate limits. Default Date.now. */
  now?: () => number;
  /** How long (by `now`) an `enforce_nonce` post returns its author's earlier one; default 5 minutes. */
  nonceWindowMs?: number;
  /**
   * Discord's rate limits, each changed or off (`false`); `false`: all off. OpenClaw's hundred commands
   * at start take minutes, as on Discord, unless `{ commands: false }`.
   */
  rateLimits?: EmulatorRateLimits | false;
  /** Keep every REST request and its answer for `exchanges()`. Off by default: a long demo would hoard them. */
  recordExchanges?: boolean;
  /** The members' `joined_at`, epoch ms (default the start); under 5 minutes ago, OpenClaw greets. */
  joinedAt?: number;
}

/** A message as the emulator stored it (see EmulatorMessage), its reactions as lists. */
export type EmulatedMessage = Pick<
  EmulatorMessage,
  "id" | "type" | "channelId" | "authorId" | "content" | "nonce" | "mentionIds" | "threadId"
> & {
  /** Reactions, when there are any: each emoji with the users who reacted with it, in order. */
  reactions?: Array<{ emoji: string; userIds: string[] }>;
};

/** A running emulator: point discord.js clients at `apiUrl`, post as people, read what was posted. */
export type DiscordEmulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

/**
 * Starts the emulator. A discord.js `Client` with `rest: { api: emulator.apiUrl }` logs in as `userId`
 * with `emulatorToken(userId)`; OpenClaw, with `DISCORD_API_URL=emulator.apiBaseUrl` and that token.
 */
export async function startDiscordEmulator(o: DiscordEmulatorOptions) {
  const state = new EmulatorState(o);
  const faults = new FaultQueue();
  const buckets = new RateLimitBuckets(o.rateLimits, state.now);
  let port = 0;
  const gatewayUrl = (): string => `ws://127.0.0.1:${port}/gateway`;
  const gateway = new Gateway(state, {
    url: gatewayUrl,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? 41_250,
  });
  state.listener = gateway;

  const recorded: RestExchange[] | null = o.recordExchanges === true ? [] : null;
  const server = createServer((req, res) => {
    void handleRest({ state, faults, buckets, gatewayUrl, recorded }, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path !== "/gateway" && path !== "/gateway/") {
      socket.destroy();
      return;
    }
    gateway.server.handleUpgrade(req, socket, head, (ws) => gateway.server.emit("connection", ws, req));
  });

  server.listen(o.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;

  let closed = false;
  return {
    /** Pass as discord.js `rest: { api }` (`http://127.0.0.1:<port>/api`). */
    apiUrl: `http://127.0.0.1:${port}/api`,
    /** `…/api/v10`, for clients that append routes to it (OpenClaw's `DISCORD_API_URL`). */
    apiBaseUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    /** `ws://127.0.0.1:<port>/gateway`, on the REST origin. */
    gatewayUrl: gatewayUrl(),
    port,
    guildId: state.guildId,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      gateway.close();
      // Keep-alive sockets, and requests a `timeout` fault leaves unanswered.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    /** Posts as any known user (typically a human), with Discord's default mention parsing. */
    async postAsUser(p: {
      userId: string;
      channelId: string;
      content: string;
    }): Promise<{ messageId: string }> {
      const { userId, channelId, content } = p;
      state.user(userId);
      const { message } = state.createMessage({ channelId, authorId: userId, content });
      return { messageId: message.id };
    },
    /** Messages in creation order, Discord's system messages too (see `type`), or those of one channel. */
    messages(channelId?: string): EmulatedMessage[] {
      return state.messages
        .filter((m) => channelId === undefined || m.channelId === channelId)
        .map((m) => ({
          id: m.id,
          type: m.type,
          channelId: m.channelId,
          authorId: m.authorId,
          content: m.content,
          mentionIds: [...m.mentionIds],
          ...(m.nonce === undefined ? {} : { nonce: m.nonce }),
          ...(m.threadId === undefined ? {} : { threadId: m.threadId }),
          ...(m.reactions?.size
            ? { reactions: [...m.reactions].map(([emoji, users]) => ({ emoji, userIds: [...users] })) }
            : {}),
        }));
    },
    /** Threads created so far. */
    threads() {
      return state.threads().map((t) => ({
        id: t.id,
        parentId: t.parentId ?? "",
        name: t.name,
        type: t.type,
        ownerId: t.ownerId ?? "",
        memberIds: [...t.members.keys()],
      }));
    },
    /** Fails the next matching REST request(s). */
    injectFault: (fault: EmulatorFault): void => faults.add(fault),
    clearFaults: (): void => faults.clear(),
    /** Drops gateway connections (one bot's, or all); see Gateway.drop. Returns how many were dropped. */
    dropGateway: (userId?: string, options?: { resumable?: boolean }): number =>
      gateway.drop(userId, options?.resumable ?? true),
    /** Live gateway connections (of one bot, or all). */
    connectedBots: (userId?: string): number => gateway.connectedCount(userId),
    /** Denies (or grants back) a user Send Messages / Create Threads in a channel. */
    deny(channelId: string, userId: string, denied = true): void {
      const channel = state.channel(channelId);
      if (denied) channel.denied.add(userId);
      else channel.denied.delete(userId);
    },
    /** Every REST request answered so far, in order; throws unless started with `recordExchanges: true`. */
    exchanges(): RestExchange[] {
      if (!recorded) {
        throw new Error(
          "exchanges(): start the emulator with recordExchanges: true to record REST exchanges",
        );
      }
      return structuredClone(recorded);
    },
  };
}
