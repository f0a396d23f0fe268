import { resolve } from "node:path";
import { migrateCollaborateSnapshot } from "../machines/index.js";
import {
  type ActorRecord,
  acquireStateDirLock,
  type ConversationIndex,
  type EventLog,
  type LowdbSnapshotStore,
} from "../persistence/index.js";
import {
  type A2AConfig,
  type A2AEvent,
  createDiscordRateLimiters,
  EventBus,
  InvalidInputError,
  type InboundDiscordMessage,
  LoopGuard,
  parseConfig,
  resolveAgentA2ASettings,
  displayText,
} from "../services/index.js";
import { ChannelDirectory } from "./channelDirectory.js";
import { withDiscordCallTimeout } from "./discordCallTimeout.js";
import { dormantMeta, onlyWaits } from "./collaborationMeta.js";
import { deliveryWarning } from "./deliveryWarnings.js";
import { EarlierPosts } from "./EarlierPosts.js";
import { GuildDirectory } from "./GuildDirectory.js";
import { Maintenance, maintenancePeriodMs } from "./maintenance.js";
import { toInspectFn } from "../durable/inspection.js";
import type { A2ARuntime, A2ARuntimeOptions, PreflightResult } from "./ports.js";
import { provideCollaborate, provideFlow } from "./sideEffects.js";
import { snapshotValidity } from "../durable/snapshotValidity.js";
import { ThreadState } from "./ThreadState.js";
import type { ThreadStateStore } from "./threadStatePersistence.js";
import { GLOBAL_TIMERS } from "../durable/timers.js";
import { WriteRetry } from "./WriteRetry.js";
import type { ActorKind } from "./hostedActor.js";
import { ActorHost } from "./ActorHost.js";
import { createInboundHandler } from "./inboundMessages.js";
import { AwaitingAnswers } from "./AwaitingAnswers.js";
import { createCollaborationService } from "./collaborationService.js";
import { createFlowService } from "./flowService.js";
import { createMentionTracking } from "./mentionTracking.js";
import { closeEach, openStateFiles } from "./stateFiles.js";
import { createSinkThreads } from "./sinkThreads.js";
import { agentOfSession } from "./sessionAgents.js";

/** Bumped when a machine changes incompatibly; older snapshots are then migrated or quarantined. */
export const MACHINE_VERSIONS = { a2aFlow: 1, collaborate: 2 } as const satisfies Record<ActorKind, number>;
type SnapshotMigration = (snapshot: unknown, fromVersion: number) => unknown;

/**
 * How older snapshots become current ones at start; a record no migration converts is quarantined.
 * collaborate 2: a new thread is opened from a starter message and the mention posted inside it.
 */
export const MACHINE_MIGRATIONS: Partial<Record<ActorKind, SnapshotMigration>> = {
  collaborate: migrateCollaborateSnapshot,
};

/**
 * The actor host a gateway embeds (API.md §7): one actor per `sessionsSend` flow and per
 * `discordSend` collaboration (its tracked mention is a child), each persisted as a snapshot after
 * every change, resumed after a restart with its durable timers re-armed.
 *
 * Lazy hosting: at start(), a collaboration whose mention only waits (for a durable timeout or the
 * target's answer) stays a record, "dormant": its timers are armed from the record and it is indexed
 * by thread, and its XState actor is restored from the record's snapshot on its first event (a timer
 * due, a bot's message in its thread), which is then delivered as to any hosted actor. Everything
 * else is hosted at start. An `inspect` inspector therefore sees a dormant collaboration only once it
 * is hosted (its `@xstate.actor` event comes then, not at start).
 */
export function createA2ARuntime(options: A2ARuntimeOptions = {}): A2ARuntime {
  const warn = options.onWarning ?? ((message: string) => console.warn(`a2a-statecharts: ${message}`));
  const config: A2AConfig = parseConfig(options.config, { onWarning: warn });
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const stateDir = resolve(options.stateDir ?? ".a2a-state");
  const userInspect = toInspectFn(options.inspect);
  const collaboration = config.discord.collaboration;

  const bus = new EventBus((error, event) =>
    warn(`an onEvent listener threw on ${event.type}: ${displayText(error)}`),
  );
  const agentOfBot = new Map(Object.entries(config.agents).map(([agentId, a]) => [a.discordBotId, agentId]));
  const scheduler = options.timers ?? GLOBAL_TIMERS;
  const limiters = createDiscordRateLimiters(
    collaboration.rateLimit,
    options.timers && { now, setTimeout: scheduler.setTimeout, clearTimeout: scheduler.clearTimeout },
  );
  // Every Discord call the runtime makes is bounded by requestTimeoutMs (design 002 §5).
  const discord =
    options.discord && withDiscordCallTimeout(options.discord, collaboration.requestTimeoutMs, scheduler);
  const loopGuard = new LoopGuard({ ...collaboration.loopGuard, now });
  // A thread a live collaboration awaits an answer in keeps its parent (ThreadState.expire).
  const threads = new ThreadState(
    { ...collaboration, cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs },
    now,
    (threadId) => awaiting.has(threadId),
  );
  const sinkThreads = createSinkThreads({
    threads,
    configured: collaboration.sinkThreads,
    flush: () => threadStore?.flush(),
    requireStarted,
  });
  const { isSinkThread } = sinkThreads;
  const directory = new ChannelDirectory(threads, discord);
  const guilds = new GuildDirectory(directory);
  /** A configured agent: own keys only, so "constructor" or "__proto__" is no agent. */
  const agentConfig = (agentId: string) =>
    Object.hasOwn(config.agents, agentId) ? config.agents[agentId] : undefined;
  const earlierPosts = new EarlierPosts({
    ...(discord === undefined ? {} : { discord }),
    nonceWindowMs: collaboration.nonceWindowMs,
    now,
    botIdOf: (agentId) => agentConfig(agentId)?.discordBotId,
    warn,
  });
  const awaiting = new AwaitingAnswers();
  let store: LowdbSnapshotStore | undefined;
  let index: ConversationIndex | undefined;
  let log: EventLog | undefined;
  let lock: { release(): Promise<void> } | undefined;
  let stopping = false;
  /** Once started: a message after that (while stopping, or stopped) is dropped, not a wiring mistake. */
  let everStarted = false;
  const writes = new WriteRetry({
    timers: scheduler,
    warn,
    retry: () => store?.flush(),
    stopped: () => stopping || store === undefined,
  });
  const landed = (write: Promise<void>) => writes.landed(write);
  /** Saves the thread state (participants, routes, sink threads, observer history) change by change. */
  let threadStore: ThreadStateStore | undefined;
  /** Ends this run's event-log subscription: a restarted runtime logs to its new log only. */
  let unsubscribeLog: (() => void) | undefined;
  /** Housekeeping while running; a task is registered here once, for every start. */
  const maintenance = new Maintenance({
    periodMs: maintenancePeriodMs(config.discord.a2aRetry.cleanupMaxAgeMs),
    now,
    timers: scheduler,
    onError: (task, error) =>
      warn(`maintenance: ${task} failed (${displayText(error)}); retried next period`),
  });
  // Without it a gateway that never calls mentions() would keep every finished actor until a restart.
  maintenance.add("prune the archive", (at) => store?.prune(at));
  // Routes, participants, parents and observer history expire by age; expire() saves what it drops.
  maintenance.add("expire thread state", (at) => {
    threads.expire(at);
  });

  const sideEffects = {
    gateway: options.gateway,
    discord,
    now,
    limiters,
    threadCreationBucket: (channelId: string) => guilds.threadCreationBucket(channelId),
    agentOfSession,
    onThreadCreated: ({ threadId, channelId }: { threadId: string; channelId: string }) =>
      threads.setParent(threadId, channelId),
    onSystemMessage: (messageId: string) => threads.markSystemMessage(messageId),
    onSystemPosting: (p: { channelId: string; asAgentId: string; content: string }) =>
      threads.postingSystemMessage(p.channelId, p.asAgentId, p.content),
    onMentionPosting: (threadId: string) => threads.setExchange(threadId, undefined),
    earlierPosts,
    beforeEffect: async () => {
      // The invoking snapshot is reported once the transition settles: let it, queue it, then wait for disk.
      await Promise.resolve();
      actors.persistDirty();
      if (store !== undefined) await landed(store.flush());
    },
  };
  const machines = { a2aFlow: provideFlow(sideEffects), collaborate: provideCollaborate(sideEffects) };
  const actors = new ActorHost({
    machines,
    machineVersions: MACHINE_VERSIONS,
    now,
    scheduler,
    warn,
    onEmitted: emitEvent,
    inspect: userInspect,
    earlierPosts,
    store: () => store,
    stopping: () => stopping,
    landed,
    onPersisted: (entry, status, meta) => {
      if (meta?.threadId === undefined) return;
      if (meta.parentChannelId !== undefined) {
        threads.addParticipants(meta.threadId, [meta.fromAgentId, meta.targetAgentId]);
      }
      if (status === "active") awaiting.add(meta.threadId, entry.id);
      else awaiting.remove(meta.threadId, entry.id);
    },
  });
  const { dormant, timers } = actors;

  function requireStarted(method: string) {
    if (store === undefined || stopping) {
      throw new Error(`A2ARuntime.${method}: the runtime is not running; call start() first`);
    }
    return store;
  }

  function emitEvent(event: { type: string }): void {
    try {
      const warning = deliveryWarning(bus.emit(event as A2AEvent));
      if (warning !== undefined) warn(warning);
    } catch (error) {
      warn(`dropped an invalid ${event.type} event: ${displayText(error)}`);
    }
  }

  const sessionsSend = createFlowService({
    config,
    hasGateway: options.gateway !== undefined,
    actors,
    index: () => index,
    requireStarted,
    now,
    random,
    scheduler,
  });
  const discordSend = createCollaborationService({
    config,
    hasDiscord: options.discord !== undefined,
    actors,
    threads,
    directory,
    loopGuard,
    isSinkThread,
    agentConfig,
    requireStarted,
    emitEvent,
    now,
    warn,
  });
  const { trackResponse, mentions, indexRecord } = createMentionTracking({
    actors,
    threads,
    awaiting,
    agentOfBot,
    requireStarted,
    now,
  });

  const inbound = createInboundHandler({
    config,
    agentOfBot,
    threads,
    guilds,
    directory,
    loopGuard,
    isSinkThread,
    now,
    warn,
    recordAnswer: async (threadId, message) => {
      if (trackResponse(threadId, message) === 0) return;
      // The caller may treat the answer as recorded once handleDiscordMessage returns: make it so.
      actors.persistDirty();
      if (store !== undefined) await landed(store.flush());
    },
    exchangeRules: (agentId) => ({
      maxPingPongTurns: resolveAgentA2ASettings(config, agentId).maxPingPongTurns,
      autoTerminate: config.session.agentToAgent.autoTerminate,
    }),
    emit: emitEvent,
  });

  async function handleDiscordMessage(input: InboundDiscordMessage): Promise<PreflightResult> {
    // Discord keeps delivering while a gateway shuts down: those messages are dropped, not thrown.
    if (everStarted && (store === undefined || stopping)) return { action: "drop", reason: "stopping" };
    requireStarted("handleDiscordMessage");
    return inbound(input);
  }

  return {
    async start() {
      if (store !== undefined) throw new Error(`A2ARuntime.start: already started on ${stateDir}`);
      const acquired = await acquireStateDirLock(stateDir, { onWarning: warn });
      // A runtime started again after stop(): stop() closed them.
      limiters.threadCreation.reopen();
      limiters.messages.reopen();
      lock = acquired;
      try {
        ({ store, log, index, threadStore } = await openStateFiles({
          stateDir,
          now,
          warn,
          threads,
          store: {
            machineVersions: { ...MACHINE_VERSIONS },
            migrations: { ...MACHINE_MIGRATIONS },
            validateSnapshot: snapshotValidity(machines),
            cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs,
          },
        }));
      } catch (error) {
        await acquired.release();
        lock = undefined;
        throw error;
      }
      stopping = false;
      everStarted = true;
      const openedLog = log;
      unsubscribeLog = bus.subscribe("*", (event) => {
        openedLog
          .append(event)
          .catch((error: unknown) => warn(`could not append to the event log: ${displayText(error)}`));
      });
      index.attach(bus);
      await store.prune(now());
      // One read-only pass over the store's own records (no copies): the actor host copies the
      // snapshot of each actor it hosts; a waiting collaboration stays a record until its first event.
      const live: Array<Readonly<ActorRecord>> = [];
      store.forEachRecord("archive", indexRecord);
      store.forEachRecord("live", (record) => {
        indexRecord(record);
        live.push(record);
      });
      for (const record of live) {
        if (record.status !== "active") continue;
        const kind = record.machineId as ActorKind;
        if (!(kind in MACHINE_VERSIONS)) continue;
        if (kind === "collaborate" && onlyWaits(record.snapshot)) {
          dormant.set(record.id, record);
          timers.set(record.id, record.timers);
          // Indexed by the thread its snapshot awaits in (the record's meta says the same, when present).
          const threadId = dormantMeta(record).threadId;
          if (threadId !== undefined) awaiting.add(threadId, record.id);
          continue;
        }
        try {
          actors.host(kind, record.id, { ...record, snapshot: structuredClone(record.snapshot) });
        } catch (error) {
          warn(
            `could not resume actor ${record.id} (${record.machineId}); it stays stored: ${displayText(error)}`,
          );
        }
      }
      actors.persistDirty();
      timers.start();
      maintenance.start();
    },

    async stop() {
      if (store === undefined) return;
      actors.persistDirty();
      stopping = true;
      writes.retryNow();
      actors.stopAll();
      limiters.threadCreation.close();
      limiters.messages.close();
      discord?.close();
      unsubscribeLog?.();
      unsubscribeLog = undefined;
      const closing = store;
      store = undefined;
      try {
        const failures = await closeEach([
          () => maintenance.stop(),
          () => threadStore?.close(),
          () => closing.close(),
          () => log?.close(),
          () => index?.close(),
        ]);
        threadStore = undefined;
        index = undefined;
        log = undefined;
        if (failures.length > 0) throw failures[0];
      } finally {
        await lock?.release();
        lock = undefined;
      }
    },

    sessionsSend,
    discordSend,
    handleDiscordMessage,
    registerSinkThread: sinkThreads.register,

    async getConversationId(routeKey: string) {
      requireStarted("getConversationId");
      return typeof routeKey === "string" ? index?.get(routeKey) : undefined;
    },

    mentions,

    onEvent(listener) {
      if (typeof listener !== "function")
        throw new InvalidInputError("onEvent", "listener", "a function", listener);
      return bus.subscribe("*", listener);
    },
  };
}
