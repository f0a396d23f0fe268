// REST calls as OpenClaw's Discord client (@openclaw/discord) makes them, for the emulator's tests:
// routes appended to DISCORD_API_URL (the emulator's `apiBaseUrl`), "Bot <token>", JSON bodies, and its
// scheduler's rate-limit handling: it waits for a bucket the headers said is empty (learning a route's
// bucket from X-RateLimit-Bucket) and retries a 429 after `retry_after`, at most 3 times.
import { type DiscordEmulator, emulatorToken } from "../../src/testing/index.js";

export interface Answer {
  status: number;
  body: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** "channels/<id>", "guilds/<id>" or the first segment: the part of a path OpenClaw keys buckets by. */
function topLevel(path: string): string {
  const [first = "", id] = (path.split("?")[0] ?? "").replace(/^\/+/, "").split("/");
  return (first === "channels" || first === "guilds") && id ? `${first}/${id}` : first;
}

export class OpenClawRest {
  private readonly bucketOf = new Map<string, string>();
  /** Bucket key → when it may be used again (epoch ms). */
  private readonly blockedUntil = new Map<string, number>();
  private globalUntil = 0;

  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async request(method: string, path: string, body?: unknown): Promise<Answer> {
    const routeKey = `${method} ${path.split("?")[0] ?? path}`;
    for (let attempt = 0; ; attempt += 1) {
      const bucket = this.bucketOf.get(routeKey) ?? routeKey;
      const wait = Math.max(this.globalUntil, this.blockedUntil.get(bucket) ?? 0) - Date.now();
      if (wait > 0) await sleep(wait);
      const response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          Authorization: `Bot ${this.token}`,
          "User-Agent": "OpenClaw Discord",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      const parsed: unknown = text.length > 0 ? JSON.parse(text) : undefined;
      this.record(routeKey, path, response, parsed);
      if (response.status !== 429 || attempt >= 3) return { status: response.status, body: parsed };
    }
  }

  private record(routeKey: string, path: string, response: Response, parsed: unknown): void {
    const header = response.headers.get("X-RateLimit-Bucket");
    const bucket = header ? `${header}:${topLevel(path)}` : (this.bucketOf.get(routeKey) ?? routeKey);
    this.bucketOf.set(routeKey, bucket);
    const resetAfter = Number(response.headers.get("X-RateLimit-Reset-After") ?? 0);
    if (response.headers.get("X-RateLimit-Remaining") === "0") {
      this.blockedUntil.set(bucket, Date.now() + resetAfter * 1000);
    }
    if (response.status !== 429) return;
    const retryAfter = (parsed as { retry_after?: number } | undefined)?.retry_after ?? 1;
    if (response.headers.get("X-RateLimit-Global") === "true")
      this.globalUntil = Date.now() + retryAfter * 1000;
    else this.blockedUntil.set(bucket, Date.now() + retryAfter * 1000);
  }
}

/** A command as OpenClaw's `Command.serialize()` sends it. */
export function slashCommand(name: string, description: string): Record<string, unknown> {
  return {
    name,
    description,
    type: 1,
    options: [{ name: "input", description: "Command input", type: 3, required: false }],
    integration_types: [0, 1],
    contexts: [0, 1, 2],
    default_member_permissions: null,
  };
}

export interface OpenClawIds {
  guild: string;
  channel: string;
  /** The bot OpenClaw runs as. */
  bot: string;
  /** Another bot: its application is not OpenClaw's. */
  otherBot: string;
  human: string;
  humanName: string;
}

const encoded = (emoji: string) => encodeURIComponent(emoji);

/**
 * What OpenClaw's Discord client asks of the REST API: at start (application, identity, allowlist
 * names, gateway, command deploy), on a guild message that mentions it (channel and guild lookups, ack
 * reaction, typing, history, reply, status reactions), in a thread it opens (autoThread) and on a
 * message there (thread, parent, starter), plus a few refused requests. Returns what it created.
 */
export async function openClawFlows(
  emulator: DiscordEmulator,
  ids: OpenClawIds,
): Promise<{ messageId: string; threadId: string; commandIds: string[] }> {
  const rest = new OpenClawRest(emulator.apiBaseUrl, emulatorToken(ids.bot));
  const app = `/applications/${ids.bot}`;

  // Start: the application id (the token does not carry it), the bot, names in its config, the gateway.
  await rest.request("GET", "/oauth2/applications/@me");
  await rest.request("GET", "/users/@me");
  await rest.request("GET", "/users/@me/guilds");
  await rest.request("GET", `/guilds/${ids.guild}/channels`);
  await rest.request("GET", `/guilds/${ids.guild}/members/search?query=${ids.humanName}&limit=25`);
  await rest.request("GET", "/gateway/bot");

  // Command deploy (reconcile): list, create what is missing; a later start edits, adds and removes.
  await rest.request("GET", `${app}/commands`);
  const status = await rest.request("POST", `${app}/commands`, slashCommand("status", "Show status"));
  const help = await rest.request("POST", `${app}/commands`, slashCommand("help", "Show help"));
  await rest.request("PUT", `${app}/guilds/${ids.guild}/commands`, [slashCommand("voice", "Join voice")]);
  await rest.request("GET", `${app}/commands`);
  const statusId = (status.body as { id: string }).id;
  await rest.request("PATCH", `${app}/commands/${statusId}`, slashCommand("status", "Show the status"));
  await rest.request("POST", `${app}/commands`, slashCommand("model", "Pick a model"));
  await rest.request("DELETE", `${app}/commands/${(help.body as { id: string }).id}`);
  // Over Discord's command limit, OpenClaw overwrites the whole set instead.
  const all = ["status", "model", "skill"].map((name) => slashCommand(name, `The ${name} command`));
  const overwritten = await rest.request("PUT", `${app}/commands`, all);
  await rest.request("POST", `${app}/guilds/${ids.guild}/commands`, slashCommand("reset", "Reset"));
  await rest.request("GET", `${app}/guilds/${ids.guild}/commands`);

  // A guild message that mentions the bot, answered.
  const { messageId } = await emulator.postAsUser({
    userId: ids.human,
    channelId: ids.channel,
    content: `<@${ids.bot}> hello`,
  });
  const reactions = `/channels/${ids.channel}/messages/${messageId}/reactions`;
  await rest.request("GET", `/channels/${ids.channel}`);
  await rest.request("GET", `/guilds/${ids.guild}`);
  await rest.request("PUT", `${reactions}/${encoded("👀")}/@me`);
  await rest.request("POST", `/channels/${ids.channel}/typing`);
  await rest.request("GET", `/channels/${ids.channel}/messages?before=${messageId}&limit=20`);
  await rest.request("POST", `/channels/${ids.channel}/messages`, {
    content: "hi there",
    nonce: "0123456789abcdef01234567",
    enforce_nonce: true,
    message_reference: { message_id: messageId, fail_if_not_exists: false },
  });
  await rest.request("PUT", `${reactions}/${encoded("✅")}/@me`);
  await rest.request("DELETE", `${reactions}/${encoded("👀")}/@me`);
  await rest.request("GET", `/channels/${ids.channel}/messages/${messageId}`);

  // autoThread: a thread from the message, the answer in it; then a message there, answered.
  const thread = await rest.request("POST", `/channels/${ids.channel}/messages/${messageId}/threads`, {
    name: "hello",
    auto_archive_duration: 60,
  });
  const threadId = (thread.body as { id: string }).id;
  await rest.request("POST", `/channels/${threadId}/messages`, { content: "in the thread" });
  const inThread = await emulator.postAsUser({ userId: ids.human, channelId: threadId, content: "thanks" });
  await rest.request("GET", `/channels/${threadId}`);
  await rest.request("GET", `/channels/${ids.channel}/messages/${threadId}`);
  await rest.request(
    "PUT",
    `/channels/${threadId}/messages/${inThread.messageId}/reactions/${encoded("👀")}/@me`,
  );
  await rest.request("POST", `/channels/${threadId}/typing`);
  await rest.request("POST", `/channels/${threadId}/messages`, { content: "you are welcome" });

  // Refused: an unknown message, a custom emoji the guild does not have, an unknown command, another
  // bot's application.
  await rest.request("PUT", `/channels/${ids.channel}/messages/${ids.human}/reactions/${encoded("👀")}/@me`);
  await rest.request("PUT", `${reactions}/${encoded("party:1500000000000000777")}/@me`);
  await rest.request("PATCH", `${app}/commands/${ids.human}`, { description: "gone" });
  await rest.request("GET", `/applications/${ids.otherBot}/commands`);

  const commandIds = (overwritten.body as Array<{ id: string }>).map((c) => c.id);
  return { messageId, threadId, commandIds };
}
