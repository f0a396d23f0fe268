// The emulator's gateway (API v10, JSON, no compression), for any number of bots: HELLO, IDENTIFY → READY
// + GUILD_CREATE, heartbeats, RESUME replaying missed dispatches, and a dispatch for each state change.
import { randomBytes } from "node:crypto";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { EmulatorChannel, EmulatorMessage, EmulatorState, Json, StateListener } from "./state.js";
import { userIdFromToken } from "./tokens.js";
import {
  APPLICATION_FLAGS,
  channelJson,
  empty,
  guildCreateJson,
  memberJson,
  messageJson,
  selfUserJson,
  threadMemberJson,
} from "./shapes.js";

const INTENT_GUILD_MESSAGES = 1 << 9;
const INTENT_GUILD_MESSAGE_REACTIONS = 1 << 10;
const INTENT_MESSAGE_CONTENT = 1 << 15;
const REPLAY_LIMIT = 500;

interface Session {
  id: string;
  userId: string;
  token: string;
  intents: number;
  seq: number;
  socket: WebSocket | null;
  /** Recent dispatches, kept for RESUME. */
  sent: Json[];
}

export class Gateway implements StateListener {
  readonly server: WebSocketServer;
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly state: EmulatorState,
    private readonly options: { url: () => string; heartbeatIntervalMs: number },
  ) {
    this.server = new WebSocketServer({ noServer: true });
    this.server.on("connection", (socket: WebSocket) => this.onConnection(socket));
  }

  private onConnection(socket: WebSocket): void {
    let session: Session | null = null;
    socket.on("close", () => {
      if (session && session.socket === socket) session.socket = null;
    });
    socket.on("error", () => undefined);
    socket.on("message", (raw: RawData) => {
      let payload: { op?: unknown; d?: unknown };
      try {
        payload = JSON.parse(raw.toString()) as { op?: unknown; d?: unknown };
      } catch {
        socket.close(4002, "Decode error");
        return;
      }
      const d = (payload.d ?? {}) as Json;
      switch (payload.op) {
        case 1:
          send(socket, { op: 11, d: null, s: null, t: null });
          return;
        case 2:
        case 6:
          if (session) socket.close(4005, "Already authenticated");
          else session = payload.op === 2 ? this.identify(socket, d) : this.resume(socket, d);
          return;
        case 3:
        case 4:
        case 8:
          return;
        default:
          socket.close(4001, "Unknown opcode");
      }
    });
    send(socket, { op: 10, d: { heartbeat_interval: this.options.heartbeatIntervalMs }, s: null, t: null });
  }

  private identify(socket: WebSocket, d: Json): Session | null {
    const token = typeof d.token === "string" ? d.token : "";
    const userId = userIdFromToken(token);
    const user = userId ? this.state.users.get(userId) : undefined;
    if (!user || !user.bot) {
      socket.close(4004, "Authentication failed");
      return null;
    }
    const session: Session = {
      id: randomBytes(16).toString("hex"),
      userId: user.id,
      token,
      intents: typeof d.intents === "number" ? d.intents : 0,
      seq: 0,
      socket,
      sent: [],
    };
    this.sessions.set(session.id, session);
    this.dispatch(session, "READY", {
      v: 10,
      user: selfUserJson(this.state, user.id),
      guilds: [{ id: this.state.guildId, unavailable: true }],
      session_id: session.id,
      session_type: "normal",
      resume_gateway_url: this.options.url(),
      shard: [0, 1],
      application: { id: user.id, flags: APPLICATION_FLAGS },
      ...empty([], "private_channels relationships presences guild_join_requests geo_ordered_rtc_regions"),
      user_settings: {},
      _trace: ["discord-emulator"],
    });
    this.dispatch(session, "GUILD_CREATE", guildCreateJson(this.state, user.id));
    return session;
  }

  private resume(socket: WebSocket, d: Json): Session | null {
    const session = typeof d.session_id === "string" ? this.sessions.get(d.session_id) : undefined;
    if (!session || d.token !== session.token) {
      send(socket, { op: 9, d: false, s: null, t: null });
      return null;
    }
    if (session.socket && session.socket !== socket) session.socket.terminate();
    session.socket = socket;
    const since = typeof d.seq === "number" ? d.seq : 0;
    for (const payload of session.sent) if ((payload.s as number) > since) send(socket, payload);
    this.dispatch(session, "RESUMED", { _trace: ["discord-emulator"] });
    return session;
  }

  private dispatch(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const payload: Json = { op: 0, t, s: session.seq, d };
    session.sent.push(payload);
    if (session.sent.length > REPLAY_LIMIT) session.sent.shift();
    if (session.socket) send(session.socket, payload);
  }

  private broadcast(
    t: string,
    d: (session: Session) => unknown,
    filter: (s: Session) => boolean = () => true,
  ): void {
    for (const session of this.sessions.values()) if (filter(session)) this.dispatch(session, t, d(session));
  }

  /** An update sends the whole message again, with what changed (a thread started from it: `thread`, flag 32). */
  message(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", message: EmulatorMessage): void {
    const json = messageJson(this.state, message, true);
    this.broadcast(
      t,
      (session) => {
        const seesContent =
          (session.intents & INTENT_MESSAGE_CONTENT) !== 0 ||
          message.authorId === session.userId ||
          message.mentionIds.includes(session.userId);
        return seesContent ? json : { ...json, content: "", embeds: [], attachments: [], components: [] };
      },
      (session) => (session.intents & INTENT_GUILD_MESSAGES) !== 0 && this.canSee(session, message.channelId),
    );
  }

  threadCreated(thread: EmulatorChannel): void {
    const json = channelJson(this.state, thread);
    this.broadcast(
      "THREAD_CREATE",
      (session) => {
        const joinedAt = thread.members.get(session.userId);
        return {
          ...json,
          newly_created: true,
          ...(joinedAt === undefined ? {} : { member: threadMemberJson(thread, session.userId, joinedAt) }),
        };
      },
      (session) => this.canSee(session, thread.id),
    );
  }

  threadMembersChanged(thread: EmulatorChannel, added: string[], removed: string[]): void {
    this.broadcast(
      "THREAD_MEMBERS_UPDATE",
      () => ({
        id: thread.id,
        guild_id: this.state.guildId,
        member_count: thread.members.size,
        added_members: added.map((userId) => ({
          ...threadMemberJson(thread, userId, thread.members.get(userId) ?? this.state.now()),
          member: memberJson(this.state, userId, true),
          presence: null,
        })),
        removed_member_ids: removed,
      }),
      (session) => this.canSee(session, thread.id),
    );
  }

  /** MESSAGE_REACTION_ADD / _REMOVE, to the bots with the GUILD_MESSAGE_REACTIONS intent. */
  reactionChanged(message: EmulatorMessage, emoji: string, userId: string, added: boolean): void {
    const d = {
      user_id: userId,
      channel_id: message.channelId,
      message_id: message.id,
      guild_id: this.state.guildId,
      emoji: { id: null, name: emoji },
      burst: false,
      type: 0,
      ...(added
        ? {
            member: memberJson(this.state, userId, true),
            message_author_id: message.authorId,
            burst_colors: [],
          }
        : {}),
    };
    this.broadcast(
      added ? "MESSAGE_REACTION_ADD" : "MESSAGE_REACTION_REMOVE",
      () => d,
      (session) =>
        (session.intents & INTENT_GUILD_MESSAGE_REACTIONS) !== 0 && this.canSee(session, message.channelId),
    );
  }

  /** Private threads are visible to their members only; everything else to every bot. */
  private canSee(session: Session, channelId: string): boolean {
    const channel = this.state.channels.get(channelId);
    if (!channel) return false;
    return channel.type !== 12 || channel.members.has(session.userId);
  }

  /** Drops connections (all, or one bot's): `resumable` cuts TCP, else closes 4009 and forgets the session. */
  drop(userId?: string, resumable = true): number {
    let dropped = 0;
    for (const session of [...this.sessions.values()]) {
      if (userId !== undefined && session.userId !== userId) continue;
      const socket = session.socket;
      if (!resumable) this.sessions.delete(session.id);
      if (!socket) continue;
      session.socket = null;
      dropped += 1;
      if (resumable) socket.terminate();
      else socket.close(4009, "Session timed out");
    }
    return dropped;
  }

  /** Number of bot sessions with a live connection (per user when `userId` is given). */
  connectedCount(userId?: string): number {
    return [...this.sessions.values()].filter(
      (s) => s.socket && (userId === undefined || s.userId === userId),
    ).length;
  }

  close(): void {
    for (const socket of this.server.clients) socket.terminate();
    this.sessions.clear();
    this.server.close();
  }
}

function send(socket: WebSocket, payload: Json): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(payload));
}
