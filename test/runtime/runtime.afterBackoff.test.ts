import { describe, expect, it } from "vitest";
import { ScriptedGateway } from "../../src/testing/index.js";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { tempStateDir } from "../support/runtimeFakes.js";

// A sessions_send flow backing off after a rate limit waits with XState's `after: { backoffDelay }`:
// stopped during the backoff and started again, it retries at the backoff's original end, once.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const clocked = useClockedRuntimes();
const runtimeOn = (stateDir: string, clock: ManualClock, gateway: ScriptedGateway) =>
  clocked(stateDir, clock, { gateway });

/**
 * The gateway outlives the runtime's restart (it runs the agents), so the restarted runtime waits on
 * the run the first one started: rate-limited once, then it ends with the reply.
 */
const rateLimitedOnce = () =>
  new ScriptedGateway({
    "agent:eden:main": [
      { reply: "검토했어요", waits: [{ status: "error", error: "429 rate limit: retry after 1s" }] },
    ],
  });

/** A flow rate-limited at T0: stopped in its backoff; returns when the backoff ends. */
async function stoppedInBackoff(stateDir: string, gateway: ScriptedGateway): Promise<number> {
  const clock = new ManualClock(T0);
  const { r, events } = runtimeOn(stateDir, clock, gateway);
  await r.start();
  r.sessionsSend({ targetSessionKey: "agent:eden:main", message: "리뷰 부탁", timeoutSeconds: 60 }).catch(
    () => undefined,
  );
  await r.idle();
  const retry = events.find((e) => e.type === "a2a.retry");
  if (retry?.type !== "a2a.retry") throw new Error("no retry");
  await r.stop();
  expect(gateway.calls.map((c) => c.runId)).toEqual(["run-1"]);
  expect(gateway.waits.map((c) => c.runId)).toEqual(["run-1"]);
  return retry.ts + retry.data.backoffMs;
}

describe("a flow stopped during its retry backoff (an after delay)", () => {
  it("started again before the backoff ends: retries at the original end, once, and completes", async () => {
    const dir = tempStateDir();
    const gateway = rateLimitedOnce();
    const endsAt = await stoppedInBackoff(dir, gateway);
    const clock = new ManualClock(endsAt - 500);
    const { r, events } = runtimeOn(dir, clock, gateway);
    await r.start();
    await clock.advance(499, () => r.idle());
    expect(gateway.waits.slice(1)).toEqual([]);
    await clock.advance(1, () => r.idle());
    expect(events.map((e) => e.type)).toEqual(["a2a.response", "a2a.complete"]);
    expect(gateway.waits.slice(1).map((c) => c.runId)).toEqual(["run-1"]);
    // The restarted runtime starts no run of its own.
    expect(gateway.calls).toHaveLength(1);
  });

  it("started again after the backoff ended: retries at once, once", async () => {
    const dir = tempStateDir();
    const gateway = rateLimitedOnce();
    const endsAt = await stoppedInBackoff(dir, gateway);
    const clock = new ManualClock(endsAt + 60_000);
    const { r, events } = runtimeOn(dir, clock, gateway);
    await r.start();
    await r.idle();
    expect(events.map((e) => e.type)).toEqual(["a2a.response", "a2a.complete"]);
    await clock.advance(60_000, () => r.idle());
    expect(gateway.waits.slice(1).map((c) => c.runId)).toEqual(["run-1"]);
  });
});
