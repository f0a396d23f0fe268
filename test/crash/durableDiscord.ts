import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  truncateSync,
} from "node:fs";
import type { DiscordPort } from "../../src/runtime/index.js";

/** One line of the durable Discord's NDJSON file. */
export type DiscordLogEntry =
  | { kind: "thread"; threadId: string; channelId: string; name: string; asAgentId: string; at: number }
  | {
      kind: "message";
      messageId: string;
      channelId: string;
      asAgentId: string;
      content: string;
      mentionUserIds: string[];
      nonce: string;
      at: number;
    }
  /** A post whose (author, nonce) was already taken: answered with the first message, nothing created. */
  | { kind: "nonce-hit"; messageId: string; channelId: string; asAgentId: string; nonce: string; at: number };

export type DeliveredMessage = Extract<DiscordLogEntry, { kind: "message" }>;

/**
 * Reads the file. A last line without its newline is a write cut short by SIGKILL (a write that
 * crosses a page boundary can be interrupted between pages): it was never acknowledged to the
 * runtime, so it does not count as delivered. Every complete line must parse.
 */
export function readDiscordLog(file: string): { entries: DiscordLogEntry[]; tornTailBytes: number } {
  if (!existsSync(file)) return { entries: [], tornTailBytes: 0 };
  const bytes = readFileSync(file);
  const end = bytes.lastIndexOf(0x0a) + 1;
  const entries = bytes
    .subarray(0, end)
    .toString("utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line, i) => {
      try {
        return JSON.parse(line) as DiscordLogEntry;
      } catch (error) {
        throw new Error(`${file}: line ${i + 1} does not parse: ${line.slice(0, 200)}`, { cause: error });
      }
    });
  return { entries, tornTailBytes: bytes.length - end };
}

/**
 * A DiscordPort for the crash-test child that plays Discord, which outlives the gateway: every thread
 * and message is appended to an NDJSON file and fsynced before the call resolves, and the file is
 * reloaded at start, so `enforce_nonce` holds across restarts — the same author and nonce returns the
 * first message and creates nothing (Discord's window is a few minutes; a crash run is shorter).
 */
export class DurableDiscord implements DiscordPort {
  private readonly fd: number;
  private readonly byNonce = new Map<string, { messageId: string; channelId: string }>();
  private readonly threadIds = new Set<string>();
  private lastId: bigint;
  /** Nonce hits answered by this instance (re-posts after a restart, or in-process retries). */
  nonceHits = 0;

  constructor(file: string) {
    const { entries, tornTailBytes } = readDiscordLog(file);
    // Drop a torn tail so the next line starts on a line of its own.
    if (tornTailBytes > 0) truncateSync(file, readFileSync(file).length - tornTailBytes);
    // Snowflake-like ids (19 digits), increasing across restarts.
    this.lastId = (BigInt(Date.now()) - 1_420_070_400_000n) << 22n;
    for (const entry of entries) {
      const id = BigInt(entry.kind === "thread" ? entry.threadId : entry.messageId);
      if (id > this.lastId) this.lastId = id;
      if (entry.kind === "thread") this.threadIds.add(entry.threadId);
      if (entry.kind === "message") {
        this.byNonce.set(nonceKey(entry.asAgentId, entry.nonce), {
          messageId: entry.messageId,
          channelId: entry.channelId,
        });
      }
    }
    this.fd = openSync(file, "a");
  }

  async sendMessage(p: Parameters<DiscordPort["sendMessage"]>[0]): Promise<{ messageId: string }> {
    const key = nonceKey(p.asAgentId, p.nonce);
    const first = this.byNonce.get(key);
    if (first !== undefined) {
      this.nonceHits += 1;
      this.append({ kind: "nonce-hit", ...first, asAgentId: p.asAgentId, nonce: p.nonce, at: Date.now() });
      return { messageId: first.messageId };
    }
    const messageId = this.nextId();
    this.append({
      kind: "message",
      messageId,
      channelId: p.channelId,
      asAgentId: p.asAgentId,
      content: p.content,
      mentionUserIds: [...p.mentionUserIds],
      nonce: p.nonce,
      at: Date.now(),
    });
    this.byNonce.set(key, { messageId, channelId: p.channelId });
    return { messageId };
  }

  /** A thread opened from a message has the message's id; a second one for it is refused (400 / 160004). */
  async createThread(p: Parameters<DiscordPort["createThread"]>[0]): Promise<{ threadId: string }> {
    const threadId = p.fromMessageId ?? this.nextId();
    if (this.threadIds.has(threadId)) {
      throw Object.assign(new Error("A thread has already been created for this message"), {
        status: 400,
        code: 160004,
      });
    }
    this.threadIds.add(threadId);
    this.append({
      kind: "thread",
      threadId,
      channelId: p.channelId,
      name: p.name,
      asAgentId: p.asAgentId,
      at: Date.now(),
    });
    return { threadId };
  }

  close(): void {
    closeSync(this.fd);
  }

  private nextId(): string {
    this.lastId += 1n;
    return this.lastId.toString();
  }

  /** Delivered means on disk: the call resolves only after the line is fsynced. */
  private append(entry: DiscordLogEntry): void {
    appendFileSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
  }
}

function nonceKey(asAgentId: string, nonce: string): string {
  return `${asAgentId}\u0000${nonce}`;
}
