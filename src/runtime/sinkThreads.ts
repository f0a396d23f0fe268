import { InvalidInputError, isDiscordId } from "../policies/index.js";
import type { ThreadState } from "./ThreadState.js";

/**
 * Report (sink) threads: named in the config, or registered while running and saved with the thread
 * state. Nothing in one reaches an agent, and discordSend refuses them.
 */
export function createSinkThreads(o: {
  threads: ThreadState;
  configured: readonly string[];
  /** Resolves once the thread state is on disk. */
  flush: () => Promise<void> | undefined;
  requireStarted: (method: string) => unknown;
}) {
  const configured: ReadonlySet<string> = new Set(o.configured);
  return {
    isSinkThread: (threadId: string) => o.threads.isSinkThread(threadId) || configured.has(threadId),

    /** Registers a sink thread; resolves once it is on disk (other thread-state saves run in the background). */
    async register(threadId: string): Promise<void> {
      o.requireStarted("registerSinkThread");
      if (!isDiscordId(threadId)) {
        throw new InvalidInputError(
          "A2ARuntime.registerSinkThread",
          "threadId",
          "a Discord thread id (a snowflake: 1 to 20 digits)",
          threadId,
        );
      }
      o.threads.markSinkThread(threadId);
      await o.flush();
    },
  };
}
