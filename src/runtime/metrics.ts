import { createRequire } from "node:module";
import type * as OpenTelemetry from "@opentelemetry/api";
import { classifyDiscordFailure } from "../policies/collaboration/classifyDiscordFailure.js";
import type { A2AEvent } from "../policies/events/A2AEventSchema.js";
import { setNewest } from "./boundedMap.js";
import type { GatewayPort } from "./ports.js";

/** The meter's name: what an OpenTelemetry view or exporter selects this library's instruments by. */
export const METER_NAME = "a2a-statecharts";

/** The runtime's metrics on OpenTelemetry's global meter; without `@opentelemetry/api`, no-ops. */
export interface RuntimeMetrics {
  /** Counts what an event tells: flows, retries, turns saved, mentions, reminders, response latency. */
  event(event: A2AEvent): void;
  /** The gateway port, counting each agent run (an LLM call). */
  gateway(port: GatewayPort): GatewayPort;
  /** One Discord request ended: by method and outcome (ok, rate_limited, failed). */
  discordCall(method: string, error: unknown): void;
  /** One record's write: `ms` from queued to durable. */
  persisted(ms: number): void;
  /** Reads the host's figures (live and dormant actors, timers pending) at each collection, until the returned function is called. */
  observe(counts: () => { live: number; dormant: number; timersPending: number }): () => void;
}

type Api = typeof OpenTelemetry;

/** `@opentelemetry/api` if the application installed it (loaded once, synchronously: it is CommonJS). */
function openTelemetry(): Api | undefined {
  try {
    return createRequire(import.meta.url)("@opentelemetry/api") as Api;
  } catch {
    return undefined;
  }
}

const NONE: RuntimeMetrics = {
  event: () => {},
  gateway: (port) => port,
  discordCall: () => {},
  persisted: () => {},
  observe: () => () => {},
};

/** Mentions whose send time is remembered for their response latency, at most (the oldest are forgotten). */
const MAX_TRACKED_MENTIONS = 10_000;

export function createRuntimeMetrics(): RuntimeMetrics {
  const api = openTelemetry();
  if (api === undefined) return NONE;
  const meter = api.metrics.getMeter(METER_NAME);
  const flows = meter.createCounter("a2a.flows", {
    description: "sessions_send flows ended, by outcome (ok, blocked) and termination reason",
  });
  const retries = meter.createCounter("a2a.retries", {
    description: "retries of a reply wait or a flow step, by error code and category",
  });
  const llmCalls = meter.createCounter("a2a.llm.calls", { description: "agent runs the runtime started" });
  const turnsSaved = meter.createCounter("a2a.turns_saved", {
    description: "ping-pong turns not taken against the configured maximum, by message intent",
  });
  const mentions = meter.createCounter("a2a.mentions", {
    description: "mentions ended, by outcome (responded, escalated)",
  });
  const reminders = meter.createCounter("a2a.mention.reminders", { description: "reminders posted" });
  const responseLatency = meter.createHistogram("a2a.mention.response_latency", {
    description: "from a mention's post to the target's answer",
    unit: "ms",
  });
  const persistenceLag = meter.createHistogram("a2a.persistence.lag", {
    description: "from an actor's change to its snapshot being durable",
    unit: "ms",
  });
  const discordRequests = meter.createCounter("a2a.discord.requests", {
    description: "Discord requests, by method and outcome (ok, rate_limited, failed)",
  });
  const actors = meter.createObservableGauge("a2a.actors", {
    description: "actors the runtime keeps, by state (live: hosted in memory; dormant: waiting on disk)",
  });
  const timers = meter.createObservableGauge("a2a.timers.pending", {
    description: "durable timers (XState delays) waiting to fire",
  });
  const sentAt = new Map<string, number>();

  return {
    event(e) {
      switch (e.type) {
        case "a2a.complete":
          flows.add(1, {
            outcome: e.data.errorCode === undefined ? "ok" : "blocked",
            termination_reason: e.data.terminationReason ?? "none",
          });
          if (e.data.errorCode === undefined) {
            turnsSaved.add(Math.max(0, e.data.configuredMaxTurns - e.data.actualTurns), {
              intent: e.data.messageIntent,
            });
          }
          return;
        case "a2a.retry":
          retries.add(1, { error_code: e.data.errorCode, error_category: e.data.errorCategory });
          return;
        case "a2a.collaborate.sent":
          if (e.data.mentionId === undefined) return;
          setNewest(sentAt, e.data.mentionId, e.ts, MAX_TRACKED_MENTIONS);
          return;
        case "a2a.collaborate.responded": {
          mentions.add(1, { outcome: "responded" });
          const sent = e.data.mentionId === undefined ? undefined : sentAt.get(e.data.mentionId);
          if (sent !== undefined && e.data.mentionId !== undefined) {
            responseLatency.record(Math.max(0, e.ts - sent));
            sentAt.delete(e.data.mentionId);
          }
          return;
        }
        case "a2a.mention.reminded":
          reminders.add(1);
          return;
        case "a2a.mention.escalated":
          mentions.add(1, { outcome: "escalated" });
          sentAt.delete(e.data.mentionId);
          return;
        default:
          return;
      }
    },
    gateway: (port) => ({
      agent: (p) => {
        llmCalls.add(1);
        return port.agent(p);
      },
      agentWait: (p) => port.agentWait(p),
      readLatestAssistantReply: (p) => port.readLatestAssistantReply(p),
    }),
    discordCall(method, error) {
      const outcome =
        error === undefined
          ? "ok"
          : classifyDiscordFailure(error).kind === "rate_limit"
            ? "rate_limited"
            : "failed";
      discordRequests.add(1, { method, outcome });
    },
    persisted: (ms) => persistenceLag.record(ms),
    observe(counts) {
      const callback: OpenTelemetry.BatchObservableCallback = (result) => {
        const c = counts();
        result.observe(actors, c.live, { state: "live" });
        result.observe(actors, c.dormant, { state: "dormant" });
        result.observe(timers, c.timersPending);
      };
      meter.addBatchObservableCallback(callback, [actors, timers]);
      return () => meter.removeBatchObservableCallback(callback, [actors, timers]);
    },
  };
}
