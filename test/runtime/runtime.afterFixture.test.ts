import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type A2AEvent, type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import { ManualClock } from "../fixtures/manualClock.js";
import {
  BOTS,
  CHANNEL,
  FakeDiscord,
  FakeGateway,
  runtimeConfig,
  tempStateDir,
} from "../support/runtimeFakes.js";

// A state directory written by the release before XState's own delays were made durable (every wait a
// `context.due` timer, see test/fixtures/makeStateDirV1.ts) must resume on today's code: same actors,
// same due times, each timer once.

const FIXTURE = fileURLToPath(new URL("../fixtures/state-dir-v1/", import.meta.url));
const fixture = JSON.parse(readFileSync(join(FIXTURE, "fixture.json"), "utf8")) as {
  now: number;
  threadA: string;
  threadB: string;
  messages: number;
};
const MINUTE = 60_000;
/** Made at T0; B was reminded at T0 + 5 min; A was sent and the flow rate-limited at T0 + 7 min = fixture.now. */
const T0 = fixture.now - 7 * MINUTE;

const started: A2ARuntime[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) await r.stop();
});

function resumeFixture() {
  const stateDir = tempStateDir("a2a-after-fixture-");
  cpSync(FIXTURE, stateDir, { recursive: true, filter: (src) => !src.endsWith("fixture.json") });
  const clock = new ManualClock(fixture.now);
  const discord = new FakeDiscord();
  // Discord still knows the two threads the fixture's collaborations wait in, and its ids go on.
  for (const threadId of [fixture.threadB, fixture.threadA])
    discord.threads.push({ threadId, channelId: CHANNEL, name: "fixture", asAgentId: "ruda" });
  for (let i = 0; i < fixture.messages; i += 1) discord.nextId();
  const gateway = new FakeGateway({ replies: { "agent:eden:main": ["검토했어요"] } });
  const events: A2AEvent[] = [];
  const warnings: string[] = [];
  const r = createA2ARuntime({
    config: runtimeConfig,
    stateDir,
    discord,
    gateway,
    now: clock.now,
    timers: clock,
    random: () => 0.5,
    onWarning: (message) => warnings.push(message),
  });
  r.onEvent((e) => events.push(e));
  started.push(r);
  const reminders = (threadId: string) =>
    discord.in(threadId).filter((m) => m.content.startsWith("[리마인더"));
  return { r, clock, discord, gateway, events, warnings, reminders };
}

describe("a state directory written by the previous release", () => {
  it("resumes both collaborations and the flow; each reminder comes at its original due time, once", async () => {
    const { r, clock, warnings, reminders } = resumeFixture();
    await r.start();
    const mentions = await r.mentions();
    expect(mentions.map((m) => [m.threadId, m.targetAgentId, m.status, m.attempts]).sort()).toEqual(
      [
        [fixture.threadA, "eden", "pending", 1],
        [fixture.threadB, "ruda", "reminded", 2],
      ].sort(),
    );

    // B's second reminder is due at T0 + 10 min, A's first at T0 + 12 min.
    const idle = () => r.idle();
    await clock.advance(T0 + 10 * MINUTE - 1 - clock.now(), idle);
    expect(reminders(fixture.threadB)).toHaveLength(0);
    await clock.advance(1, idle);
    expect(reminders(fixture.threadB)).toHaveLength(1);
    expect(reminders(fixture.threadB)[0]?.mentionUserIds).toEqual([BOTS.ruda]);

    await clock.advance(T0 + 12 * MINUTE - 1 - clock.now(), idle);
    expect(reminders(fixture.threadA)).toHaveLength(0);
    await clock.advance(1, idle);
    expect(reminders(fixture.threadA)).toHaveLength(1);
    expect(reminders(fixture.threadA)[0]?.mentionUserIds).toEqual([BOTS.eden]);

    // Nothing fires twice: one minute on, each thread still has its one reminder.
    await clock.advance(MINUTE, idle);
    expect([reminders(fixture.threadA).length, reminders(fixture.threadB).length]).toEqual([1, 1]);
    expect(warnings).toEqual([]);
  });

  it("retries the rate-limited flow at the end of its backoff, once, and the flow completes", async () => {
    const { r, clock, gateway, events, warnings } = resumeFixture();
    await r.start();
    await r.idle();
    // The backoff (1 s after the rate limit) is not over yet: nothing is asked of the gateway.
    await clock.advance(999, () => r.idle());
    expect(gateway.waitCalls).toEqual([]);
    await clock.advance(1, () => r.idle());
    expect(events.map((e) => e.type)).toContain("a2a.complete");
    // The same run is waited on again (a rate limit does not resend the message), exactly once.
    expect(gateway.waitCalls.map((c) => c.runId)).toEqual(["run-1"]);
    expect(gateway.agentCalls).toEqual([]);
    const complete = events.find((e) => e.type === "a2a.complete");
    expect(complete?.type === "a2a.complete" && complete.data).toMatchObject({
      retryAttempts: 1,
      terminationReason: "skipped",
    });
    expect(warnings).toEqual([]);
  });
});
