import { performance } from "node:perf_hooks";
import { resolve } from "node:path";
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
} from "../policies/index.js";
import { GLOBAL_TIMERS } from "../durable/timers.js";
import { messageCatalog } from "../policies/messages/messageCatalog.js";
import { AwaitingAnswers } from "./AwaitingAnswers.js";
import { CallsInFlight } from "./callsInFlight.js";
import { ChannelDirectory } from "./channelDirectory.js";
import { createCollaborationService } from "./collaborationService.js";
import { deliveryWarning } from "./deliveryWarnings.js";
import { runtimeLogger } from "./logger.js";
import { createRuntimeMetrics } from "./metrics.js";
import { untilStalled } from "./stalled.js";
import { withDiscordCallTimeout } from "./discordCallTimeout.js";
import { EarlierPosts } from "./EarlierPosts.js";
import { createFlowService } from "./flowService.js";
import { GuildDirectory } from "./GuildDirectory.js";
import { createInboundHandler } from "./inboundMessages.js";
import { createMentionTracking } from "./mentionTracking.js";
import type { A2ARuntime, A2ARuntimeOptions, PreflightResult } from "./ports.js";
import { createRuntimeActors } from "./runtimeActors.js";
import { agentOfSession } from "./sessionAgents.js";
import { createSinkThreads } from "./sinkThreads.js";
import { closeEach, openStateDir, type StateDirSession } from "./stateFiles.js";
import { ThreadState } from "./ThreadState.js";

export { MACHINE_VERSIONS } from "./runtimeActors.js";

/**
 * The A2A runtime a gateway embeds: one durable actor per `sessionsSend` flow and per `discordSend`
 * collaboration. A collaboration that only waits stays a dormant record until its first event (so an
 * `inspect` inspector sees it only then).
 */
export function createA2ARuntime(options: A2ARuntimeOptions = {}): A2ARuntime {
  const log = runtimeLogger(options);
  const warn = (message: string): void => log.warn({}, message);
  const config: A2AConfig = parseConfig(options.config, { onWarning: warn });
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const stateDir = resolve(options.stateDir ?? ".a2a-state");
  const collaboration = config.discord.collaboration;
  const messages = messageCatalog(config);

  const bus = new EventBus((error, event) =>
    warn(`an onEvent listener threw on ${event.type}: ${displayText(error)}`),
  );
  const agentOfBot = new Map(Object.entries(config.agents).map(([agentId, a]) => [a.discordBotId, agentId]));
  const scheduler = options.timers ?? GLOBAL_TIMERS;
  const limiters = createDiscordRateLimiters(
    collaboration.rateLimit,
    // Called as methods: `timers` may be a class instance (a VirtualClock) whose methods use `this`.
    options.timers && {
      now,
      setTimeout: (fn: () => void, ms: number) => scheduler.setTimeout(fn, ms),
      clearTimeout: (handle: unknown) => scheduler.clearTimeout(handle),
    },
  );
  // Every Discord call the runtime makes is bounded by requestTimeoutMs: a hung call is a transient failure.
  const metrics = createRuntimeMetrics();
  const discord =
    options.discord &&
    withDiscordCallTimeout(options.discord, collaboration.requestTimeoutMs, scheduler, metrics.discordCall);
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
    flush: () => session?.threadStore.flush(),
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
  const calls = new CallsInFlight();
  let running = false;
  /** The lock and the files held while running (and while starting or stopping). */
  let session: StateDirSession | undefined;
  /** Once started: a message after that (while stopping, or stopped) is dropped, not a wiring mistake. */
  let everStarted = false;
  const sideEffects = {
    gateway: options.gateway && calls.gateway(metrics.gateway(options.gateway)),
    discord,
    now,
    messages,
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
  const { host: actors, store } = createRuntimeActors({
    store: options.store,
    stateDir,
    cleanupMaxAgeMs,
    sideEffects,
    earlierPosts,
    threads,
    awaiting,
    indexRecord: (record) => indexRecord(record),
    emit: emitEvent,
    now,
    timers: scheduler,
    inspect: options.inspect,
    warn,
    queued: (durable) => {
      const queuedAt = performance.now();
      void durable.then((landed) => landed && metrics.persisted(performance.now() - queuedAt));
    },
  });
  bus.subscribe("*", (event) => metrics.event(event));
  let stopObserving = (): void => {};

  function requireStarted(method: string): void {
    if (!running) throw new Error(`A2ARuntime.${method}: the runtime is not running; call start() first`);
  }

  /** Events emitted so far: idle() looks again when one came while it waited (it started more writes). */
  let emitted = 0;

  function emitEvent(event: { type: string }): void {
    emitted += 1;
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
    conversationOf: (routeKey) => threads.conversationOf(routeKey),
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
  const { routeThreadMessage, mentions, indexRecord } = createMentionTracking({
    actors,
    store,
    threads,
    awaiting,
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
    messages,
    now,
    warn,
    // The caller may treat an answer as recorded once handleDiscordMessage returns: it waits for this.
    routeThreadMessage,
    exchangeRules: (agentId) => ({
      maxPingPongTurns: resolveAgentA2ASettings(config, agentId).maxPingPongTurns,
      autoTerminate: config.session.agentToAgent.autoTerminate,
    }),
    emit: emitEvent,
  });

  async function handleDiscordMessage(input: InboundDiscordMessage): Promise<PreflightResult> {
    // Discord keeps delivering while a gateway shuts down: those messages are dropped, not thrown.
    if (everStarted && !running) return { action: "drop", reason: "stopping" };
    requireStarted("handleDiscordMessage");
    return inbound(input);
  }

  return {
    messages,

    async start() {
      if (session !== undefined) throw new Error(`A2ARuntime.start: already started on ${stateDir}`);
      const opened = await openStateDir({ stateDir, now, warn, threads, bus });
      session = opened;
      // A runtime started again after stop(): stop() closed them.
      limiters.threadCreation.reopen();
      limiters.messages.reopen();
      try {
        await actors.start();
      } catch (error) {
        session = undefined;
        await opened
          .close()
          .catch((failure: unknown) => warn(`closing after a failed start: ${displayText(failure)}`));
        throw error;
      }
      running = true;
      everStarted = true;
      stopObserving = metrics.observe(() => actors.counts());
      const { live, dormant, timersPending } = actors.counts();
      log.info({ stateDir, live, dormant, timersPending }, "started");
    },

    async stop() {
      if (!running) return;
      running = false;
      stopObserving();
      limiters.threadCreation.close();
      limiters.messages.close();
      discord?.close();
      const closing = session;
      session = undefined;
      const failures = await closeEach([() => actors.stop(), () => closing?.close()]);
      if (failures.length > 0) throw failures[0];
      log.info({ stateDir }, "stopped");
    },

    sessionsSend,
    discordSend,
    handleDiscordMessage,
    registerSinkThread: sinkThreads.register,

    async getConversationId(routeKey: string) {
      requireStarted("getConversationId");
      return typeof routeKey === "string" ? threads.conversationOf(routeKey) : undefined;
    },

    mentions,

    async idle() {
      // A landed write starts side effects, whose outcomes start writes: until a pass finds none. Effects
      // waiting only for a timer (a rate limit, a backoff) end the wait: firing it is the caller's.
      for (;;) {
        const before = emitted;
        const watch = { stopped: false };
        const stalled = await Promise.race([
          actors.idle().then(() => false),
          untilStalled({
            busy: () => actors.counts().writesPending > 0 || calls.size > 0 || (discord?.inFlight ?? 0) > 0,
            progress: () => emitted,
            watch,
          }),
        ]).finally(() => (watch.stopped = true));
        const called = await calls.settled();
        await session?.idle();
        if (stalled || (!called && emitted === before)) return;
      }
    },

    onEvent(listener) {
      if (typeof listener !== "function")
        throw new InvalidInputError("onEvent", "listener", "a function", listener);
      return bus.subscribe("*", listener);
    },
  };
}
