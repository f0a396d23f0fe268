import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { BOTS, CHANNEL, FakeDiscord, tempStateDir } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

// The runtime's metrics as an application's OpenTelemetry SDK sees them: a MeterProvider with the
// SDK's in-memory exporter, registered globally before the runtime is created.

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;
const clocked = useClockedRuntimes();
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// Exports only when the test asks (forceFlush): the interval is never reached.
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });

beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  metrics.disable();
});

/** Every data point of every metric collected now, by metric name. */
async function collected(): Promise<Map<string, Array<DataPoint<number | Histogram>>>> {
  exporter.reset();
  await reader.forceFlush();
  const points = new Map<string, Array<DataPoint<number | Histogram>>>();
  for (const resource of exporter.getMetrics()) {
    for (const scope of resource.scopeMetrics) {
      if (scope.scope.name !== "a2a-statecharts") continue;
      for (const metric of scope.metrics) {
        points.set(metric.descriptor.name, metric.dataPoints as Array<DataPoint<number | Histogram>>);
      }
    }
  }
  return points;
}

const value = (points: Map<string, Array<DataPoint<number | Histogram>>>, name: string, attrs = {}) =>
  points
    .get(name)
    ?.filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + (typeof p.value === "number" ? p.value : p.value.count), 0) ?? 0;

describe("metrics through @opentelemetry/api", () => {
  it("moves every instrument: flows, retries, LLM calls, turns saved, mentions, reminders, latency, persistence, actors, timers, Discord", async () => {
    const clock = new ManualClock(T0);
    const discord = new FakeDiscord();
    // The first post (the starter message) is rate-limited: retried after Discord's Retry-After.
    discord.failures.push(
      Object.assign(new Error("You are being rate limited."), { status: 429, retryAfter: 1_000 }),
    );
    const gateway = new ScriptedGateway({
      "agent:eden:main": [
        { reply: "리뷰 완료", waits: [{ status: "error", error: "429 rate limit: retry after 2s" }] },
      ],
    });
    const { r, events } = clocked(tempStateDir(), clock, { discord, gateway });
    await r.start();

    const flow = r.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "[NO_REPLY_NEEDED] 리뷰 부탁",
      timeoutSeconds: 60,
    });
    await r.idle();
    expect(events.filter((e) => e.type === "a2a.retry")).toHaveLength(1);
    await clock.advance(2_000);
    expect(await flow).toMatchObject({ status: "ok", retryAttempts: 1 });

    const answered = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" });
    await r.idle();
    expect(discord.failures).toEqual([]);
    await clock.advance(1_000);
    const sent = await answered;
    if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
    const silent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "seum", message: "배포 확인" });
    if (silent.status !== "sent") throw new Error(`discordSend was ${silent.status}`);

    const waiting = await collected();
    expect(
      value(waiting, "a2a.actors", { state: "live" }) + value(waiting, "a2a.actors", { state: "dormant" }),
    ).toBe(2);
    expect(value(waiting, "a2a.timers.pending")).toBeGreaterThanOrEqual(2);

    await clock.advance(5 * MINUTE);
    await r.idle();
    expect(events.filter((e) => e.type === "a2a.mention.reminded")).toHaveLength(2);
    await r.handleDiscordMessage({
      messageId: "1400000000000009001",
      channelId: sent.threadId,
      threadId: sent.threadId,
      parentChannelId: CHANNEL,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "봤어요, 괜찮습니다",
      mentionUserIds: [],
      ts: clock.now(),
    });
    // Each idle() lets a post land before the clock moves on: the next timeout counts from that post.
    await clock.advance(5 * MINUTE);
    await r.idle();
    expect(events.filter((e) => e.type === "a2a.mention.reminded")).toHaveLength(3);
    await clock.advance(5 * MINUTE);
    await r.idle();
    expect(events.filter((e) => e.type === "a2a.mention.escalated")).toHaveLength(1);

    const end = await collected();
    expect(value(end, "a2a.flows", { outcome: "ok" })).toBe(1);
    expect(value(end, "a2a.retries", { error_code: "rate_limit" })).toBe(1);
    expect(value(end, "a2a.llm.calls")).toBe(gateway.calls.length);
    expect(value(end, "a2a.turns_saved")).toBeGreaterThan(0);
    expect(value(end, "a2a.mentions", { outcome: "responded" })).toBe(1);
    expect(value(end, "a2a.mentions", { outcome: "escalated" })).toBe(1);
    expect(value(end, "a2a.mention.reminders")).toBe(3); // eden once, seum twice
    const latency = end.get("a2a.mention.response_latency")?.[0]?.value as Histogram | undefined;
    expect(latency).toMatchObject({ count: 1, sum: 5 * MINUTE });
    expect(value(end, "a2a.persistence.lag")).toBeGreaterThan(0);
    expect(value(end, "a2a.discord.requests", { outcome: "rate_limited" })).toBe(1);
    expect(value(end, "a2a.discord.requests", { outcome: "ok" })).toBe(
      discord.messages.length + discord.threads.length,
    );
    expect(value(end, "a2a.actors", { state: "live" }) + value(end, "a2a.actors", { state: "dormant" })).toBe(
      0,
    );
  });
});
