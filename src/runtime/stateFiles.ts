import { acquireStateDirLock } from "../persistence/index.js";
import { EventLog } from "./EventLog.js";
import { displayText, type EventBus } from "../policies/index.js";
import type { ThreadState } from "./ThreadState.js";
import { ThreadStateStore } from "./threadStatePersistence.js";

/** Runs every closer, even after one failed (a store that cannot write leaves no file open); returns the failures. */
export async function closeEach(closers: ReadonlyArray<() => unknown>): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const close of closers)
    await Promise.resolve()
      .then(close)
      .catch((error: unknown) => failures.push(error));
  return failures;
}

/** What a running runtime holds in its state directory beside its actor store: the lock, the event log and the thread state. */
export interface StateDirSession {
  threadStore: ThreadStateStore;
  /** Resolves once no event-log append or thread-state save is in flight. */
  idle(): Promise<void>;
  /** Stops logging, closes every file, then releases the lock; rejects with the first failure. */
  close(): Promise<void>;
}

/**
 * Takes the state directory's lock, opens its files, and from then logs every event of `bus` and keeps
 * each route's latest conversation in the thread state. A failure releases whatever it took.
 */
export async function openStateDir(o: {
  stateDir: string;
  now: () => number;
  warn: (message: string) => void;
  threads: ThreadState;
  bus: EventBus;
}): Promise<StateDirSession> {
  const { stateDir, now, warn } = o;
  const lock = await acquireStateDirLock(stateDir, { onWarning: warn });
  let log: EventLog | undefined;
  let threadStore: ThreadStateStore;
  try {
    log = await EventLog.open({ dir: stateDir, onWarning: warn });
    threadStore = await ThreadStateStore.open({ stateDir, threads: o.threads, now, onWarning: warn });
  } catch (error) {
    // Whatever opened is closed again (no file handle left behind), and the lock released.
    const failures = await closeEach([() => log?.close(), () => lock.release()]);
    for (const failure of failures) warn(`closing after a failed start: ${displayText(failure)}`);
    throw error;
  }
  const openLog = log;
  /** Appends not yet written, for idle(). */
  const appending = new Set<Promise<void>>();
  const unsubscribeLog = o.bus.subscribe("*", (event) => {
    const append = openLog
      .append(event)
      .catch((error: unknown) => o.warn(`could not append to the event log: ${displayText(error)}`));
    appending.add(append);
    void append.then(() => appending.delete(append));
  });
  const unsubscribeConversations = (["a2a.send", "a2a.response", "a2a.complete"] as const).map((type) =>
    o.bus.subscribe(type, ({ routeKey, conversationId, ts }) => {
      if (routeKey && conversationId) o.threads.noteConversation(routeKey, conversationId, ts);
    }),
  );
  return {
    threadStore,
    async idle() {
      while (appending.size > 0) await Promise.all([...appending]);
      await threadStore.idle();
    },
    async close() {
      unsubscribeLog();
      for (const unsubscribe of unsubscribeConversations) unsubscribe();
      try {
        const failures = await closeEach([() => threadStore.close(), () => openLog.close()]);
        if (failures.length > 0) throw failures[0];
      } finally {
        await lock.release();
      }
    },
  };
}
