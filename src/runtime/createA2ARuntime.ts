import { resolve } from "node:path";
import type { AnyStateMachine } from "xstate";
import type { MachineRegistration } from "../durable/durableHostTypes.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import { migrateCollaborateSnapshot } from "../machines/index.js";
import {
  type ActorRecord,
  acquireStateDirLock,
  type ConversationIndex,
  type EventLog,
} from "../persistence/index.js";
import { lowdbStore } from "../persistence/createLowdbStore.js";
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
import { type CollaborationMeta, collaborationMeta, dormantMeta, onlyWaits } from "./collaborationMeta.js";
import { deliveryWarning } from "./deliveryWarnings.js";
import { EarlierPosts } from "./EarlierPosts.js";
import { GuildDirectory } from "./GuildDirectory.js";
import { Host } from "../durable/DurableHost.js";
import type { A2ARuntime, A2ARuntimeOptions, PreflightResult } from "./ports.js";
import { provideCollaborate, provideFlow } from "./sideEffects.js";
import { ThreadState } from "./ThreadState.js";
import type { ThreadStateStore } from "./threadStatePersistence.js";
import { GLOBAL_TIMERS } from "../durable/timers.js";
import type { ActorKind } from "./hostedActor.js";
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

/** The runtime's machines as the durable host registers them: each with its version and migration. */
function registrations(machines: Record<ActorKind, AnyStateMachine>): Record<string, MachineRegistration> {
  return Object.fromEntries(
    (Object.keys(machines) as ActorKind[]).map((kind) => {
      const migrate = MACHINE_MIGRATIONS[kind];
      return [
        kind,
        { machine: machines[kind], version: MACHINE_VERSIONS[kind], ...(migrate && { migrate }) },
      ];
    }),
  );
}

/** A collaboration whose mention only waits (for a due time or the target's answer): it may stay a record. */
function isWaitingCollaboration(record: Readonly<ActorRecord>): boolean {
  return record.machineId === "collaborate" && onlyWaits(record.snapshot);
}

/**
 * The A2A runtime a gateway embeds: one actor per `sessionsSend` flow and per `discordSend`
 * collaboration (its tracked mention is a child), run by the durable host: each persisted after every
 * burst of changes, each side effect started once the snapshot that started it is on disk, resumed
 * after a restart with its due times and XState delays at their original wall-clock times.
 *
 * Lazy hosting: at start(), a collaboration whose mention only waits (for a due time or the target's
 * answer) stays a record, "dormant", indexed by thread; its XState actor is restored on its first
 * event (a due time, a bot's message in its thread). Everything else is hosted at start. An `inspect`
 * inspector therefore sees a dormant collaboration only once it is hosted.
 */
export function createA2ARuntime(options: A2ARuntimeOptions = {}): A2ARuntime {
  const warn = options.onWarning ?? ((message: string) => console.warn(`a2a-statecharts: ${message}`));
  const config: A2AConfig = parseConfig(options.config, { onWarning: warn });
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const stateDir = resolve(options.stateDir ?? ".a2a-state");
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
  let running = false;
  let index: ConversationIndex | undefined;
  let log: EventLog | undefined;
  let lock: { release(): Promise<void> } | undefined;
  /** Once started: a message after that (while stopping, or stopped) is dropped, not a wiring mistake. */
  let everStarted = false;
  /** Saves the thread state (participants, routes, sink threads, observer history) change by change. */
  let threadStore: ThreadStateStore | undefined;
  /** Ends this run's event-log subscription: a restarted runtime logs to its new log only. */
  let unsubscribeLog: (() => void) | undefined;
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
  };
  const cleanupMaxAgeMs = config.discord.a2aRetry.cleanupMaxAgeMs;
  const actors = new Host(
    {
      store: options.store ?? lowdbStore({ stateDir, cleanupMaxAgeMs }, false),
      machines: registrations({
        a2aFlow: provideFlow(sideEffects),
        collaborate: provideCollaborate(sideEffects),
      }),
      now,
      timers: scheduler,
      inspect: options.inspect,
      logger: { warn },
      cleanupMaxAgeMs,
    },
    {
      name: "A2ARuntime",
      onEmitted: emitEvent,
      metaOf: (entry) => (entry.kind === "collaborate" ? { ...collaborationMeta(entry.actor) } : undefined),
      onQueued: (entry, record) => {
        const meta = record.meta as CollaborationMeta | undefined;
        if (meta?.threadId === undefined) return;
        if (meta.parentChannelId !== undefined) {
          threads.addParticipants(meta.threadId, [meta.fromAgentId, meta.targetAgentId]);
        }
        if (record.status === "active") awaiting.add(meta.threadId, entry.id);
        else awaiting.remove(meta.threadId, entry.id);
      },
      // Only a collaboration whose mention waits stays a record: the others are few and short-lived.
      mayStayDormant: isWaitingCollaboration,
      // A post re-run after a restart may have been made before the crash: EarlierPosts checks for it.
      startEffect: (start, restoredFrom) =>
        restoredFrom === undefined ? start() : earlierPosts.restoring(restoredFrom, start),
      // Waiting for a run and reading its reply change nothing: they need not wait for the disk.
      ungatedEffects: new Set(["agentWait", "readReply"]),
      opened: indexStoredRecords,
    },
  );
  // Routes, participants, parents and observer history expire by age; expire() saves what it drops.
  actors.maintenance.add("expiring thread state", (at) => {
    threads.expire(at);
  });

  function requireStarted(method: string): void {
    if (!running) throw new Error(`A2ARuntime.${method}: the runtime is not running; call start() first`);
  }

  /** One read-only pass over the stored records at start: thread participants, routes, awaited answers. */
  async function indexStoredRecords(store: SnapshotStore): Promise<void> {
    for (const record of await store.list("archive")) indexRecord(record);
    for (const record of await store.list("live")) {
      indexRecord(record);
      // A dormant collaboration is indexed by the thread its snapshot awaits in (its meta says the same, when present).
      const threadId = isWaitingCollaboration(record) ? dormantMeta(record).threadId : undefined;
      if (threadId !== undefined) awaiting.add(threadId, record.id);
    }
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
    cleanupMaxAgeMs,
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
      await actors.persisted();
    },
    exchangeRules: (agentId) => ({
      maxPingPongTurns: resolveAgentA2ASettings(config, agentId).maxPingPongTurns,
      autoTerminate: config.session.agentToAgent.autoTerminate,
    }),
    emit: emitEvent,
  });

  /** Closes what start() opened beside the actor store; throws the first failure, after closing the rest. */
  async function closeFiles(): Promise<void> {
    unsubscribeLog?.();
    unsubscribeLog = undefined;
    const failures = await closeEach([() => threadStore?.close(), () => log?.close(), () => index?.close()]);
    threadStore = undefined;
    index = undefined;
    log = undefined;
    if (failures.length > 0) throw failures[0];
  }

  async function handleDiscordMessage(input: InboundDiscordMessage): Promise<PreflightResult> {
    // Discord keeps delivering while a gateway shuts down: those messages are dropped, not thrown.
    if (everStarted && !running) return { action: "drop", reason: "stopping" };
    requireStarted("handleDiscordMessage");
    return inbound(input);
  }

  return {
    async start() {
      if (lock !== undefined) throw new Error(`A2ARuntime.start: already started on ${stateDir}`);
      const acquired = await acquireStateDirLock(stateDir, { onWarning: warn });
      lock = acquired;
      // A runtime started again after stop(): stop() closed them.
      limiters.threadCreation.reopen();
      limiters.messages.reopen();
      try {
        ({ log, index, threadStore } = await openStateFiles({ stateDir, now, warn, threads }));
      } catch (error) {
        lock = undefined;
        await acquired.release();
        throw error;
      }
      const openedLog = log;
      // Subscribed before the actors resume: what they emit at once is logged and indexed too.
      unsubscribeLog = bus.subscribe("*", (event) => {
        openedLog
          .append(event)
          .catch((error: unknown) => warn(`could not append to the event log: ${displayText(error)}`));
      });
      index.attach(bus);
      try {
        await actors.start();
      } catch (error) {
        await closeFiles().finally(async () => {
          lock = undefined;
          await acquired.release();
        });
        throw error;
      }
      running = true;
      everStarted = true;
    },

    async stop() {
      if (!running) return;
      running = false;
      limiters.threadCreation.close();
      limiters.messages.close();
      discord?.close();
      try {
        const failures = await closeEach([() => actors.stop(), closeFiles]);
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
