import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import {
  type A2AFlowInput,
  type CollaborateInput,
  type CollaborateOutput,
  MachineInputError,
  migrateCollaborateSnapshot,
} from "../machines/index.js";
import {
  type ActorRecord,
  acquireStateDirLock,
  ConversationIndex,
  EventLog,
  LowdbSnapshotStore,
} from "../persistence/index.js";
import {
  type A2AConfig,
  type A2AEvent,
  createDiscordRateLimiters,
  discordErrorCode,
  EventBus,
  IdempotencyCache,
  isDiscordId,
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
import { Maintenance, maintenancePeriodMs } from "./maintenance.js";
import { toInspectFn } from "../durable/inspection.js";
import type {
  A2AFlowResult,
  A2ARuntime,
  A2ARuntimeOptions,
  DiscordSendParams,
  DiscordSendResult,
  MentionSummary,
  PreflightResult,
  SessionsSendParams,
} from "./ports.js";
import { flowSettings } from "./flowSettings.js";
import { DiscordSendParamsSchema, parsePublicInput, SessionsSendParamsSchema } from "./inputSchemas.js";
import { provideCollaborate, provideFlow } from "./sideEffects.js";
import { snapshotValidity } from "../durable/snapshotValidity.js";
import { ThreadState } from "./ThreadState.js";
import { openThreadStateStore, type ThreadStateStore } from "./threadStatePersistence.js";
import { GLOBAL_TIMERS } from "../durable/timers.js";
import { WriteRetry } from "./WriteRetry.js";
import { flowResult, messageSent } from "./flowResult.js";
import { type ActorKind, until } from "./hostedActor.js";
import { ActorHost } from "./ActorHost.js";
import { MissingPortError } from "./MissingPortError.js";
import { collaborationInput } from "./collaborationInput.js";
import { createInboundHandler } from "./inboundMessages.js";

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

/** How long an agent counts as answering a sender's thread message, for the reply_in_thread rule. */
const HANDLING_WINDOW_MS = 10 * 60_000;

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
  const idempotency = new IdempotencyCache<DiscordSendResult>({ now });
  // A thread a live collaboration awaits an answer in keeps its parent (ThreadState.expire).
  const threads = new ThreadState(
    { ...collaboration, cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs },
    now,
    (threadId) => awaitingIn.has(threadId),
  );
  // Sink threads come from the config and from registerSinkThread (persisted with the thread state).
  const configSinkThreads: ReadonlySet<string> = new Set(collaboration.sinkThreads);
  const isSinkThread = (id: string) => threads.sinkThreads.has(id) || configSinkThreads.has(id);
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
  /** Live collaborations by the thread they await an answer in: inbound messages touch only those. */
  const awaitingIn = new Map<string, Set<string>>();
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
      const waiting = awaitingIn.get(meta.threadId) ?? new Set<string>();
      if (status === "active") waiting.add(entry.id);
      else waiting.delete(entry.id);
      if (waiting.size > 0) awaitingIn.set(meta.threadId, waiting);
      else awaitingIn.delete(meta.threadId);
    },
  });
  const { hosted, dormant, timers } = actors;

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

  function agentOfSession(sessionKey: string): string {
    return /^agent:([^:]+):/.exec(sessionKey)?.[1] ?? sessionKey;
  }

  async function sessionsSend(params: SessionsSendParams): Promise<A2AFlowResult> {
    requireStarted("sessionsSend");
    if (options.gateway === undefined) throw new MissingPortError("sessionsSend", "gateway");
    const parsed = parsePublicInput("sessionsSend", SessionsSendParamsSchema, params);
    if (!parsed.ok) throw parsed.error;
    const p = parsed.value;
    const timeoutSeconds = p.timeoutSeconds ?? 0;
    const routeKey = p.routeKey ?? `${p.requesterSessionKey ?? "external"}:${p.targetSessionKey}`;
    const conversationId = index?.get(routeKey) ?? randomUUID();
    const toAgent = agentOfSession(p.targetSessionKey);
    const id = `flow-${randomUUID()}`;
    const input: A2AFlowInput = {
      conversationId,
      routeKey,
      ...(p.requesterSessionKey === undefined ? {} : { requesterSessionKey: p.requesterSessionKey }),
      targetSessionKey: p.targetSessionKey,
      message: p.message,
      skipPingPong: p.skipPingPong === true,
      announceTarget: p.announceTarget ?? null,
      ...flowSettings(config, toAgent),
      // The actor id: stable across restarts, so a re-run send is deduplicated by the gateway.
      idempotencyKey: id,
      seed: Math.floor(random() * 2 ** 31),
      mode: timeoutSeconds > 0 ? "sync" : "async",
      fromAgent: p.requesterSessionKey === undefined ? "external" : agentOfSession(p.requesterSessionKey),
      toAgent,
      startedAt: now(),
    };
    const entry = actors.host("a2aFlow", id, { input });
    const resultOf = (status: A2AFlowResult["status"]): A2AFlowResult =>
      flowResult(entry.actor, conversationId, status);
    const finished = until(entry, () => {
      const s = entry.actor.getSnapshot() as { status: string };
      // "ok" stands for the flow's own status (ok or blocked); an actor that failed outright rejects.
      return s.status === "done" ? resultOf("ok") : undefined;
    });

    // Not awaited when the caller only waits for "accepted": a stop meanwhile must not be an unhandled rejection.
    finished.catch(() => undefined);
    if (timeoutSeconds === 0) {
      // Accepted once the message left (or the flow ended before it could): the flow goes on as an actor.
      return until(entry, () => (messageSent(entry.actor) ? resultOf("accepted") : undefined));
    }
    let timer: unknown;
    const timedOut = new Promise<A2AFlowResult>((resolveTimeout) => {
      timer = scheduler.setTimeout(() => resolveTimeout(resultOf("timeout")), timeoutSeconds * 1_000);
    });
    return Promise.race([finished, timedOut]).finally(() => scheduler.clearTimeout(timer));
  }

  async function discordSend(params: DiscordSendParams): Promise<DiscordSendResult> {
    requireStarted("discordSend");
    if (options.discord === undefined) throw new MissingPortError("discordSend", "discord");
    const parsed = parsePublicInput("discordSend", DiscordSendParamsSchema, params);
    if (!parsed.ok) {
      return rejectCollaboration(params, {
        code: "invalid_input",
        message: `${parsed.error.param}: ${parsed.error.reason}`,
      });
    }
    const p = parsed.value;
    const run = () => startCollaboration(p);
    return p.idempotencyKey ? idempotency.run(p.idempotencyKey, run) : run();
  }

  /** A discordSend refused before any actor exists: answered, and reported as a2a.collaborate.failed. */
  function rejectCollaboration(
    p: Partial<Record<keyof DiscordSendParams, unknown>> | undefined,
    error: { code: string; message: string },
  ): DiscordSendResult {
    const fromAgentId = typeof p?.fromAgentId === "string" ? p.fromAgentId : "";
    const toAgentId = typeof p?.targetAgentId === "string" ? p.targetAgentId : "";
    emitEvent({
      type: "a2a.collaborate.failed",
      ts: now(),
      ...(fromAgentId === "" ? {} : { fromAgent: fromAgentId }),
      ...(toAgentId === "" ? {} : { toAgent: toAgentId }),
      data: {
        fromAgentId,
        toAgentId,
        errorCode: error.code,
        errorMessage: error.message,
        escalate: false,
      },
    } as { type: string });
    return { status: "rejected", error: { code: error.code, message: error.message } };
  }

  async function startCollaboration(p: DiscordSendParams): Promise<DiscordSendResult> {
    const from = agentConfig(p.fromAgentId);
    if (from === undefined) {
      return rejectCollaboration(p, {
        code: "unknown_agent",
        message: `fromAgentId ${JSON.stringify(p.fromAgentId)} is not a configured agent`,
      });
    }
    if (p.threadId && isSinkThread(p.threadId)) {
      return rejectCollaboration(p, {
        code: "sink_thread",
        message: `thread ${p.threadId} is a report (sink) thread; collaborations stay out of it`,
      });
    }
    // An explicit thread is checked against the allowlist by its parent: one the runtime cannot learn is refused.
    let threadParentId: string | undefined;
    let threadLookupFailure: CollaborateInput["threadLookupFailure"];
    if (p.threadId) {
      const parent = await directory.parentOf(p.threadId);
      if ("failure" in parent && !parent.failure.retryable) {
        // A 403/404 is the collaboration's own failure: it fails with it and tells a human (design 002 §5).
        const { kind, escalate } = parent.failure;
        threadLookupFailure = { kind, retryable: false, escalate, message: displayText(parent.error) };
      } else if ("failure" in parent) {
        return rejectCollaboration(p, {
          code: discordErrorCode(parent.failure.kind),
          message: `could not look up thread ${p.threadId}: ${displayText(parent.error)}`,
        });
      } else if ("unknown" in parent) {
        return rejectCollaboration(p, {
          code: "channel_not_allowed",
          message: `${parent.unknown}, so it cannot be checked against discord.collaboration.allowedChannels`,
        });
      } else threadParentId = parent.parentChannelId;
    }
    const at = now();
    const target = agentConfig(p.targetAgentId);
    const verdict = loopGuard.checkCollaboration(p.fromAgentId, p.targetAgentId);
    if (verdict.allowed && verdict.warning) warn(`loop guard: ${verdict.warning}`);
    const handling = threads.handlingOf(p.fromAgentId, at, HANDLING_WINDOW_MS);
    const route = p.threadId
      ? undefined
      : threads.reusableRoute(p.fromAgentId, p.targetAgentId, p.topicId, at);
    const reusable = route !== undefined && isSinkThread(route.threadId) ? undefined : route;
    const id = `collab-${randomUUID()}`;
    const input = collaborationInput(
      p,
      {
        id,
        at,
        from,
        target,
        ...(threadParentId === undefined ? {} : { threadParentId }),
        ...(threadLookupFailure === undefined ? {} : { threadLookupFailure }),
        ...(reusable === undefined ? {} : { reusable }),
        loopGuard: verdict,
        handling,
      },
      config,
    );
    const entry = actors.host("collaborate", id, { input });
    return until<DiscordSendResult>(
      entry,
      () => {
        const snapshot = entry.actor.getSnapshot() as {
          status: string;
          value: string;
          context: {
            resolvedThreadId?: string;
            messageId?: string;
            parentChannelId?: string;
            error?: CollaborateOutput["error"];
          };
          output?: CollaborateOutput;
        };
        const c = snapshot.context;
        if (c.messageId !== undefined && c.resolvedThreadId !== undefined) {
          threads.useRoute({
            fromAgentId: p.fromAgentId,
            targetAgentId: p.targetAgentId,
            ...(p.topicId ? { topicId: p.topicId } : {}),
            threadId: c.resolvedThreadId,
            channelId: c.parentChannelId ?? threads.parents.get(c.resolvedThreadId) ?? "",
            lastUsedAt: now(),
          });
          return {
            status: "sent" as const,
            threadId: c.resolvedThreadId,
            messageId: c.messageId,
            mentionId: id,
          };
        }
        // A failure is the answer once known, while its notice to a human may still be under way.
        if (snapshot.status === "active" && c.error === undefined) return undefined;
        const error = snapshot.output?.error ??
          c.error ?? { code: "discord_unavailable", message: "the collaboration ended" };
        return { status: "rejected" as const, error };
      },
      (error) => ({
        status: "rejected" as const,
        error: {
          code: error instanceof MachineInputError ? "invalid_input" : "discord_unavailable",
          message: displayText(error),
        },
      }),
    );
  }

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

  async function registerSinkThread(threadId: string): Promise<void> {
    requireStarted("registerSinkThread");
    if (!isDiscordId(threadId)) {
      throw new InvalidInputError(
        "A2ARuntime.registerSinkThread",
        "threadId",
        "a Discord thread id (a snowflake: 1 to 20 digits)",
        threadId,
      );
    }
    threads.markSinkThread(threadId);
    // The caller waits until the sink thread is on disk (other thread-state saves run in the background).
    await threadStore?.flush();
  }

  /** Tells every collaboration awaiting an answer in the thread; returns how many were told. */
  function trackResponse(threadId: string, m: InboundDiscordMessage): number {
    let told = 0;
    for (const id of [...(awaitingIn.get(threadId) ?? [])]) {
      const entry = actors.hostedOrWoken(id);
      if (entry === undefined) continue;
      const snapshot = entry.actor.getSnapshot() as { value: string };
      if (snapshot.value !== "awaitingResponse") continue;
      // Only the target's answer can end a mention. Another bot's message (the requester's own post
      // echoed back, say) would rewrite an unchanged snapshot and move its save time past the first
      // try of a post in flight, which EarlierPosts reads as the post's age.
      if (agentOfBot.get(m.authorId) !== collaborationMeta(entry.actor).targetAgentId) continue;
      entry.actor.send({ type: "RESPONSE_RECEIVED", authorId: m.authorId, at: m.ts, messageId: m.messageId });
      told += 1;
    }
    return told;
  }

  async function mentions(): Promise<MentionSummary[]> {
    const current = requireStarted("mentions");
    await current.prune(now());
    const summaries = new Map<string, MentionSummary>();
    const add = (id: string, meta: CollaborationMeta | undefined) => {
      if (meta?.threadId === undefined || meta.mention === undefined) return;
      summaries.set(id, { id, threadId: meta.threadId, targetAgentId: meta.targetAgentId, ...meta.mention });
    };
    current.forEachRecord("archive", (record) => {
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    });
    for (const record of dormant.values()) add(record.id, dormantMeta(record));
    for (const entry of hosted.values())
      if (entry.kind === "collaborate") add(entry.id, collaborationMeta(entry.actor));
    return [...summaries.values()];
  }

  /** Indexes a stored record (thread participants, routes, collaborations awaiting an answer) at start. */
  function restore(record: Readonly<ActorRecord>): void {
    const meta = record.meta as CollaborationMeta | undefined;
    if (record.machineId === "collaborate" && meta?.threadId !== undefined) {
      threads.addParticipants(meta.threadId, [meta.fromAgentId, meta.targetAgentId], record.updatedAt);
      if (record.status === "active") {
        awaitingIn.set(meta.threadId, (awaitingIn.get(meta.threadId) ?? new Set<string>()).add(record.id));
      }
      if (meta.parentChannelId !== undefined) {
        threads.useRoute({
          fromAgentId: meta.fromAgentId,
          targetAgentId: meta.targetAgentId,
          ...(meta.topicId === undefined ? {} : { topicId: meta.topicId }),
          threadId: meta.threadId,
          channelId: meta.parentChannelId,
          lastUsedAt: meta.sentAt ?? record.updatedAt,
        });
      }
    }
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
        store = await LowdbSnapshotStore.open({
          dir: stateDir,
          now,
          machineVersions: { ...MACHINE_VERSIONS },
          migrations: { ...MACHINE_MIGRATIONS },
          validateSnapshot: snapshotValidity(machines),
          cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs,
          onWarning: warn,
        });
        log = await EventLog.open({ dir: stateDir, onWarning: warn });
        index = await ConversationIndex.open({ dir: stateDir, now, rebuildFromLog: true, onWarning: warn });
        threadStore = await openThreadStateStore({ stateDir, threads, now, onWarning: warn });
      } catch (error) {
        // Whatever opened is closed again (no file handle left behind), then the lock is released.
        for (const close of [
          () => threadStore?.close(),
          () => index?.close(),
          () => log?.close(),
          () => store?.close(),
        ])
          await Promise.resolve()
            .then(close)
            .catch((failure: unknown) => warn(`closing after a failed start: ${displayText(failure)}`));
        threadStore = undefined;
        index = undefined;
        log = undefined;
        store = undefined;
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
      store.forEachRecord("archive", restore);
      store.forEachRecord("live", (record) => {
        restore(record);
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
          if (threadId !== undefined)
            awaitingIn.set(threadId, (awaitingIn.get(threadId) ?? new Set<string>()).add(record.id));
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
        // Each is closed even if one before it failed: a store that cannot write leaves no file open.
        const failures: unknown[] = [];
        for (const close of [
          () => maintenance.stop(),
          () => threadStore?.close(),
          () => closing.close(),
          () => log?.close(),
          () => index?.close(),
        ])
          await Promise.resolve()
            .then(close)
            .catch((error: unknown) => failures.push(error));
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
    registerSinkThread,

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
