import { A2AError } from "../errors/A2AError.js";
import type { DiscordPort, RuntimeTimers } from "./ports.js";

/** A Discord call past `requestTimeoutMs`: no HTTP status, so transient and retried (the nonce dedups). */
export class DiscordCallTimeoutError extends A2AError {
  override readonly code = "DISCORD_CALL_TIMEOUT";
  override readonly name = "DiscordCallTimeoutError";

  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`Discord ${method} did not answer within ${timeoutMs} ms`);
  }
}

/** A DiscordPort whose every call fails with DiscordCallTimeoutError after `timeoutMs`; see close(). */
export interface TimedDiscordPort extends DiscordPort {
  /** Clears the timers of calls still in flight (at stop): they no longer fail, nor hold the process. */
  close(): void;
  /** Calls under way that have neither answered nor timed out. */
  readonly inFlight: number;
}

/** `port` with no call waiting on Discord longer than `timeoutMs` (on `timers`). */
export function withDiscordCallTimeout(
  port: DiscordPort,
  timeoutMs: number,
  timers: RuntimeTimers,
  /** Told as each call ends: its method, and its error (undefined when it succeeded). */
  ended: (method: string, error: unknown) => void = () => {},
): TimedDiscordPort {
  const pending = new Set<unknown>();
  function timed<T>(method: string, call: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const handle = timers.setTimeout(() => {
        pending.delete(handle);
        reject(new DiscordCallTimeoutError(method, timeoutMs));
      }, timeoutMs);
      pending.add(handle);
      const settle = () => {
        pending.delete(handle);
        timers.clearTimeout(handle);
      };
      // A port that throws instead of rejecting fails the call the same way.
      Promise.resolve()
        .then(call)
        .then(
          (value) => (settle(), ended(method, undefined), resolve(value)),
          (error: unknown) => (settle(), ended(method, error), reject(error)),
        );
    });
  }
  const describeChannel = port.describeChannel?.bind(port);
  const recentMessages = port.recentMessages?.bind(port);
  return {
    sendMessage: (p) => timed("sendMessage", () => port.sendMessage(p)),
    createThread: (p) => timed("createThread", () => port.createThread(p)),
    ...(describeChannel === undefined
      ? {}
      : { describeChannel: (p) => timed("describeChannel", () => describeChannel(p)) }),
    ...(recentMessages === undefined
      ? {}
      : { recentMessages: (p) => timed("recentMessages", () => recentMessages(p)) }),
    close() {
      for (const handle of pending) timers.clearTimeout(handle);
      pending.clear();
    },
    get inFlight() {
      return pending.size;
    },
  };
}
