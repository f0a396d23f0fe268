import { describe, expect, it } from "vitest";
import { readStateDir } from "../../src/persistence/index.js";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { CHANNEL, FakeDiscord, tempStateDir } from "../support/runtimeFakes.js";

// A collaboration whose Discord call is rate limited waits out Retry-After with XState's
// `after: { retryDelay }`: stopped during that wait and started again, it posts at the original time,
// once, and is stored with the delay's due time.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const RETRY_AFTER_MS = 30_000;
const clocked = useClockedRuntimes();
const runtimeOn = (stateDir: string, clock: ManualClock, discord: FakeDiscord) =>
  clocked(stateDir, clock, { discord }).r;

/** A collaboration whose starter post was answered 429 at T0; the runtime stopped at T0 + 10 s. */
async function stoppedWhileRateLimited(stateDir: string) {
  const clock = new ManualClock(T0);
  const discord = new FakeDiscord();
  discord.failures.push(
    Object.assign(new Error("You are being rate limited."), { status: 429, retryAfter: RETRY_AFTER_MS }),
  );
  const r = runtimeOn(stateDir, clock, discord);
  await r.start();
  // The caller's answer waits for the post; it is told when the runtime stops.
  const answer = r
    .discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" })
    .catch(() => undefined);
  await r.idle();
  expect(discord.failures).toEqual([]);
  await clock.advance(10_000, () => r.idle());
  expect(discord.messages).toEqual([]);
  await r.stop();
  await answer;
  return discord;
}

describe("a collaboration stopped while a rate-limited post waits for its retry (an after delay)", () => {
  it("is stored with the delay's due time", async () => {
    const dir = tempStateDir();
    await stoppedWhileRateLimited(dir);
    const { actors } = await readStateDir(dir);
    const record = actors.find((a) => a.record.machineId === "collaborate")?.record;
    expect(record?.delayed?.map((d) => [d.event.type, d.target, d.dueAt])).toEqual([
      ["xstate.after.retryDelay.collaborate.retrying", [], T0 + RETRY_AFTER_MS],
    ]);
  });

  it("started again before it is due: posts at T0 + Retry-After, not before, once", async () => {
    const dir = tempStateDir();
    await stoppedWhileRateLimited(dir);
    const clock = new ManualClock(T0 + 20_000);
    const discord = new FakeDiscord();
    const r = runtimeOn(dir, clock, discord);
    await r.start();
    await clock.advance(RETRY_AFTER_MS - 20_000 - 1, () => r.idle());
    expect(discord.messages).toEqual([]);
    await clock.advance(1, () => r.idle());
    expect(discord.messages).toHaveLength(2);
    await clock.advance(60_000, () => r.idle());
    const starters = discord.in(CHANNEL);
    expect(starters).toHaveLength(1);
    expect(discord.threads.map((t) => t.threadId)).toEqual([starters[0]?.messageId]);
    expect(discord.messages).toHaveLength(2);
  });
});
