// A local Discord API v10 server for tests and demos (node:http + ws, 127.0.0.1 only).
//
// REST under /api/v10 and a JSON gateway at /gateway, on one origin, serve several bot users at once.
// A discord.js Client logs in with `rest: { api: emulator.apiUrl }` and the token
// `emulatorToken(botUserId)`, i.e. "<userId>.emulator" (see tokens.ts; a real-looking
// "<base64(userId)>.xxx.yyy" works too); a client that appends routes to a versioned base (OpenClaw's
// DISCORD_API_URL) takes `emulator.apiBaseUrl`. Tokens of unknown or non-bot users are refused. Humans
// post through `postAsUser`.
//
// Behaviour: allowed_mentions; nonce + enforce_nonce (a post with enforce_nonce returns the earlier
// enforced post of the same author + nonce within `nonceWindowMs`, default 5 minutes, with no second
// MESSAGE_CREATE; a post without enforce_nonce is never returned so; by the emulator's `now`; a message
// list, GET /channels/{id}/messages, carries no nonces, as Discord's does not); content ≤ 2000 chars
// (400 / 50035); unknown channel (404 / 10003); missing permissions (403 / 50013, per channel `denied`
// user ids or `deny()`); thread from a message (thread id = message id; a second one → 400 / 160004);
// standalone threads (type 11; the API default is 12, private); a reply with fail_if_not_exists: false
// to an unknown message is posted as a plain message. A bot's own reactions with Unicode emojis (PUT /
// DELETE …/reactions/{emoji}/@me; kept on the message, shown in its `reactions`, MESSAGE_REACTION_ADD /
// _REMOVE to bots with that intent; no custom emojis: 400 / 10014; at most 20 emojis a message). A bot's
// application (GET /oauth2/applications/@me, id = the bot's user id) and its commands, global and in the
// guild (list, create or update by name, edit, delete, bulk overwrite). Rate limits (`rateLimits`):
// per-route buckets and a global limit per bot, X-RateLimit-* headers on every routed answer, 429s as
// Discord sends them. System messages as Discord posts them: "X started a thread" (type 18) in the
// parent of a public thread opened without a message; MESSAGE_UPDATE of the message a thread is started
// from (its `thread`, flag 32); "X added / removed Y" (type 1 / 2) when someone else adds a member to a
// thread or removes one (joining or leaving posts nothing). Faults: `injectFault` (429 bucket or global,
// 5xx, timeout, reset) and `dropGateway`. `recordExchanges` keeps every REST request and answer for
// `exchanges()`. Not emulated: attachments (multipart bodies), message edits and deletes, humans'
// reactions (no test API) and the other reaction routes (list reactors, remove another's or all), custom
// emojis, roles, permission overwrites (`denied` is enforced, not shown on channels), interactions
// (commands are stored, never invoked), the caps on commands and the daily quota of command creates, the
// invalid-request limit, the thread starter message (type 21, listed first in such a thread's history,
// sent on no gateway event), type 18 for a thread started from an "older" message (Discord does not say
// how old), and "X added Y" when a mention adds a member (Discord documents neither).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
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
  /** Text channels. `denied`: user ids without Send Messages / Create Threads there. */
  channels: Array<{ id: string; name: string; denied?: string[] }>;
  users: EmulatorUser[];
  /** Gateway heartbeat interval announced in HELLO (default 41 250 ms). */
  heartbeatIntervalMs?: number;
  /**
   * The emulator's clock: message ids (snowflakes) and so message timestamps. Default Date.now; the
   * demo passes its accelerated clock so messages are stamped in the same time as the runtime's.
   */
  now?: () => number;
  /**
   * How long (by `now`) a post with `enforce_nonce` returns the earlier enforced post of the same
   * author and nonce instead of posting again. Discord documents "a few minutes"; default 5 minutes.
   */
  nonceWindowMs?: number;
  /**
   * Discord's rate limits, counted by `now`: per bot, a global limit (50 requests/s) and per-route
   * buckets (messages: 5 per 5 s per channel; threads: 5 per minute per channel; command creates: 5 per
   * 20 s; reactions: 1 per 250 ms per channel; other routes: 50/s). Every answer carries its bucket's
   * `X-RateLimit-*` headers; a request over a limit gets Discord's 429. Change a limit or turn it off
   * (`false`) per test; `false` turns them all off. A bot that registers its commands one by one at
   * start (OpenClaw's does, about a hundred) waits out the command bucket for minutes, as on Discord;
   * `{ commands: false }` lets it register at once.
   */
  rateLimits?: EmulatorRateLimits | false;
  /**
   * Keep every REST request and its answer, for `exchanges()`: to assert what a bot sent and what it
   * was told. Off by default, so a long-running demo does not keep them all in memory.
   */
  recordExchanges?: boolean;
  /**
   * When the guild's members joined it (GUILD_CREATE's and the members' `joined_at`), epoch ms; default
   * the emulator's start by `now`. A bot may greet a guild it joined moments ago (OpenClaw introduces
   * itself in one joined under 5 minutes ago); an earlier time starts the bots as long-standing members.
   */
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
export interface DiscordEmulator {
  /** Pass as discord.js `rest: { api }` (`http://127.0.0.1:<port>/api`). */
  apiUrl: string;
  /**
   * The REST base with its version, `http://127.0.0.1:<port>/api/v10`, for clients that append routes
   * to it: OpenClaw's `DISCORD_API_URL` (it takes the gateway from `GET …/gateway/bot`, which must be on
   * the same origin, as `gatewayUrl` is).
   */
  apiBaseUrl: string;
  /** `ws://127.0.0.1:<port>/gateway`, on the REST origin. */
  gatewayUrl: string;
  port: number;
  guildId: string;
  close(): Promise<void>;
  /** Posts as any known user (typically a human), with Discord's default mention parsing. */
  postAsUser(p: { userId: string; channelId: string; content: string }): Promise<{ messageId: string }>;
  /**
   * Messages in creation order, Discord's system messages too (see `type`); in one channel (or thread)
   * when `channelId` is given.
   */
  messages(channelId?: string): EmulatedMessage[];
  /** Threads created so far. */
  threads(): Array<{
    id: string;
    parentId: string;
    name: string;
    type: number;
    ownerId: string;
    memberIds: string[];
  }>;
  /** Fails the next matching REST request(s). */
  injectFault(fault: EmulatorFault): void;
  clearFaults(): void;
  /** Drops gateway connections (one bot's, or all); see Gateway.drop. Returns how many were dropped. */
  dropGateway(userId?: string, options?: { resumable?: boolean }): number;
  /** Live gateway connections (of one bot, or all). */
  connectedBots(userId?: string): number;
  /** Denies (or grants back) a user Send Messages / Create Threads in a channel. */
  deny(channelId: string, userId: string, denied?: boolean): void;
  /**
   * Every REST request answered so far, in the order answered: method, path (after /api/v10), query,
   * status and both JSON bodies. Throws unless the emulator was started with `recordExchanges: true`.
   */
  exchanges(): RestExchange[];
}

/**
 * Starts a Discord emulator on 127.0.0.1: Discord's REST API (v10) and gateway, for the routes a bot
 * that posts, opens threads, reads messages, reacts and registers its commands uses. A discord.js
 * `Client` created with `rest: { api: emulator.apiUrl }` logs in with `emulatorToken(userId)` as that
 * user; OpenClaw, with `DISCORD_API_URL=emulator.apiBaseUrl` and that token.
 */
export async function startDiscordEmulator(o: DiscordEmulatorOptions): Promise<DiscordEmulator> {
  const state = new EmulatorState(o);
  const faults = new FaultQueue();
  const buckets = new RateLimitBuckets(o.rateLimits, state.now);
  const held = new Set<ServerResponse>();
  let port = 0;
  const gatewayUrl = (): string => `ws://127.0.0.1:${port}/gateway`;
  const gateway = new Gateway(state, {
    url: gatewayUrl,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? 41_250,
  });
  state.listener = gateway;

  const recorded: RestExchange[] | null = o.recordExchanges === true ? [] : null;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void handleRest({ state, faults, buckets, gatewayUrl, held, recorded }, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path !== "/gateway" && path !== "/gateway/") {
      socket.destroy();
      return;
    }
    gateway.server.handleUpgrade(req, socket, head, (ws) => gateway.server.emit("connection", ws, req));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  let closed = false;
  return {
    apiUrl: `http://127.0.0.1:${port}/api`,
    apiBaseUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    gatewayUrl: gatewayUrl(),
    port,
    guildId: state.guildId,
    async close() {
      if (closed) return;
      closed = true;
      gateway.close();
      for (const res of held) res.destroy();
      held.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async postAsUser({ userId, channelId, content }) {
      state.user(userId);
      const { message } = state.createMessage({ channelId, authorId: userId, content });
      return { messageId: message.id };
    },
    messages(channelId) {
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
    injectFault: (fault) => faults.add(fault),
    clearFaults: () => faults.clear(),
    dropGateway: (userId, options) => gateway.drop(userId, options?.resumable ?? true),
    connectedBots: (userId) => gateway.connectedCount(userId),
    deny(channelId, userId, denied = true) {
      const channel = state.channel(channelId);
      if (denied) channel.denied.add(userId);
      else channel.denied.delete(userId);
    },
    exchanges() {
      if (!recorded) {
        throw new Error(
          "exchanges(): start the emulator with recordExchanges: true to record REST exchanges",
        );
      }
      return structuredClone(recorded);
    },
  };
}
