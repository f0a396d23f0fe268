// The runtime's actors on the durable host, composed as createA2ARuntime composes them but without the
// rest of the runtime: for tests of one runtime concern (the flow service, the collaboration service,
// mention tracking) over a real host and store.
import { stoppedAfterEachOnFakeClock } from "./fakeClock.js";
import type { DurableHost } from "../../src/durable/durableHostTypes.js";
import { GLOBAL_TIMERS } from "../../src/durable/timers.js";
import type { ActorRecord } from "../../src/persistence/actorRecord.js";
import type { SnapshotStore } from "../../src/persistence/SnapshotStorePort.js";
import { AwaitingAnswers } from "../../src/runtime/AwaitingAnswers.js";
import { ChannelDirectory } from "../../src/runtime/channelDirectory.js";
import { createCollaborationService } from "../../src/runtime/collaborationService.js";
import { EarlierPosts } from "../../src/runtime/EarlierPosts.js";
import type { DiscordPort, GatewayPort } from "../../src/runtime/ports.js";
import { createRuntimeActors } from "../../src/runtime/runtimeActors.js";
import { agentOfSession } from "../../src/runtime/sessionAgents.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import {
  type A2AConfig,
  createDiscordRateLimiters,
  LoopGuard,
  parseConfig,
} from "../../src/policies/index.js";
import { runtimeConfig } from "./runtimeFakes.js";

export interface RuntimeParts {
  config: A2AConfig;
  actors: DurableHost;
  /** The store the actors are kept in. */
  store: SnapshotStore;
  threads: ThreadState;
  awaiting: AwaitingAnswers;
  /** Every event the actors emitted, in order. */
  emitted: Array<{ type: string }>;
  /** Told of every event the actors emit (after `emitted` records it). */
  onEmit: (event: { type: string }) => void;
  warnings: string[];
  /** Indexes a stored record when the store opens; a test binds mention tracking's here. */
  indexRecord: (record: Readonly<ActorRecord>) => void;
  /** Stops the host and the rate limits. */
  stop(): Promise<void>;
}

/**
 * The actors of a runtime on `store`, driven by the global (in tests: fake) clock and timers. Not
 * started: call `parts.actors.start()`, and `parts.stop()` after the test.
 */
export function runtimeParts(o: {
  store: SnapshotStore;
  gateway?: GatewayPort;
  discord?: DiscordPort;
  /** The runtime config (default: the three agents of runtimeFakes on CHANNEL). */
  config?: unknown;
}): RuntimeParts {
  const config = parseConfig(o.config ?? runtimeConfig);
  const collaboration = config.discord.collaboration;
  const cleanupMaxAgeMs = config.discord.a2aRetry.cleanupMaxAgeMs;
  const now = () => Date.now();
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  const awaiting = new AwaitingAnswers();
  const threads = new ThreadState({ ...collaboration, cleanupMaxAgeMs }, now, (threadId) =>
    awaiting.has(threadId),
  );
  const limiters = createDiscordRateLimiters(collaboration.rateLimit);
  const earlierPosts = new EarlierPosts({
    ...(o.discord === undefined ? {} : { discord: o.discord }),
    nonceWindowMs: collaboration.nonceWindowMs,
    now,
    botIdOf: (agentId) => config.agents[agentId]?.discordBotId,
    warn,
  });
  const emitted: Array<{ type: string }> = [];
  const parts: RuntimeParts = {
    config,
    threads,
    awaiting,
    emitted,
    onEmit: () => {},
    warnings,
    indexRecord: () => {},
    ...createRuntimeActorsOf({
      store: o.store,
      // Unused: the actors live in `store`.
      stateDir: "/nonexistent/a2a-state",
      cleanupMaxAgeMs,
      sideEffects: {
        ...(o.gateway === undefined ? {} : { gateway: o.gateway }),
        ...(o.discord === undefined ? {} : { discord: o.discord }),
        now,
        limiters,
        threadCreationBucket: async () => "guild:test",
        agentOfSession,
        onThreadCreated: ({ threadId, channelId }) => threads.setParent(threadId, channelId),
        earlierPosts,
      },
      earlierPosts,
      threads,
      awaiting,
      indexRecord: (record) => parts.indexRecord(record),
      emit: (event) => {
        emitted.push(event);
        parts.onEmit(event);
      },
      now,
      timers: GLOBAL_TIMERS,
      inspect: undefined,
      warn,
    }),
    async stop() {
      limiters.threadCreation.close();
      limiters.messages.close();
      await parts.actors.stop();
    },
  };
  return parts;
}

/** The host as `parts.actors`, beside its store. */
function createRuntimeActorsOf(...args: Parameters<typeof createRuntimeActors>) {
  const { host, store } = createRuntimeActors(...args);
  return { actors: host, store };
}

/**
 * Per test: fake setTimeout/Date at `t0` (setImmediate and I/O stay real), and a `keep(parts)` whose
 * parts are stopped after the test. Call at the top of a test file.
 */
export function usePartsHarness(t0: number): (parts: RuntimeParts) => RuntimeParts {
  const kept = stoppedAfterEachOnFakeClock<RuntimeParts>(t0);
  return (parts) => {
    kept.push(parts);
    return parts;
  };
}

/**
 * `discordSend` over `parts`, as the runtime wires it (its refusals reported through `parts.onEmit`);
 * `discord` undefined: the runtime was given no DiscordPort.
 */
export function discordSendOver(
  parts: RuntimeParts,
  discord: DiscordPort | undefined,
  isSinkThread: (threadId: string) => boolean = () => false,
) {
  const { config, threads } = parts;
  return createCollaborationService({
    config,
    hasDiscord: discord !== undefined,
    actors: parts.actors,
    threads,
    directory: new ChannelDirectory(threads, discord),
    loopGuard: new LoopGuard({ ...config.discord.collaboration.loopGuard, now: () => Date.now() }),
    isSinkThread,
    agentConfig: (agentId) => (Object.hasOwn(config.agents, agentId) ? config.agents[agentId] : undefined),
    requireStarted: () => undefined,
    emitEvent: (event) => {
      parts.emitted.push(event);
      parts.onEmit(event);
    },
    now: () => Date.now(),
    warn: (message) => parts.warnings.push(message),
  });
}

/** A promise with its resolve and reject at hand. */
export function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether a promise has settled, after a few rounds of callbacks: to show an answer is held back. */
export function settledState<T>(promise: Promise<T>): () => "pending" | "resolved" | "rejected" {
  let state: "pending" | "resolved" | "rejected" = "pending";
  promise.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  return () => state;
}

/** `inner` with some of its methods replaced. */
export function storeWith(inner: SnapshotStore, over: Partial<SnapshotStore>): SnapshotStore {
  return {
    open: (options) => inner.open(options),
    get: (id) => inner.get(id),
    put: (records) => inner.put(records),
    list: (which) => inner.list(which),
    prune: (olderThan) => inner.prune(olderThan),
    close: () => inner.close(),
    ...over,
  };
}

/**
 * A store whose puts can be held back: while held, a put waits (in order) until release(), then
 * writes. Counts every put, to show that something was (or was not) written.
 */
export class HoldingStore implements SnapshotStore {
  puts = 0;
  private gate: ReturnType<typeof deferred<void>> | undefined;

  constructor(private readonly inner: SnapshotStore) {}

  hold(): void {
    this.gate ??= deferred();
  }

  release(): void {
    this.gate?.resolve();
    this.gate = undefined;
  }

  open(...args: Parameters<SnapshotStore["open"]>) {
    return this.inner.open(...args);
  }
  get(id: string) {
    return this.inner.get(id);
  }
  async put(records: readonly ActorRecord[]) {
    this.puts += 1;
    const gate = this.gate;
    if (gate !== undefined) await gate.promise;
    return this.inner.put(records);
  }
  /** How many times each kind was listed. */
  readonly listed = { live: 0, archive: 0 };
  list(which: "live" | "archive") {
    this.listed[which] += 1;
    return this.inner.list(which);
  }
  prune(olderThan: number) {
    return this.inner.prune(olderThan);
  }
  close() {
    return this.inner.close();
  }
}
