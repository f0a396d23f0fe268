// Gateway processes on one PostgreSQL under faults, end to end: real child processes
// (fixtures/gatewayProcess.ts) with discord.js clients logged in to the Discord emulator, frozen with
// SIGSTOP, killed with SIGKILL, cut off from the database by a TCP proxy, or running on a clock that is
// off. Every post is read back from the emulator: an answered mention is never reminded, an
// acknowledged call is posted once, a failed one never.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { snowflakeTimestamp } from "../../src/testing/emulator/snowflake.js";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.js";
import { usePostgres } from "../support/postgres.js";
import { tempDir } from "../support/tempDir.js";
import { GatewayChild, killAll } from "./fixtures/gatewayChild.js";
import type { GatewaySettings } from "./fixtures/gatewayProtocol.js";

const GUILD = "1700000000000000001";
const CHANNEL = "1700000000000000010";
const HUMAN = "1700000000000000900";
const BOTS = { ruda: "1700000000000000101", eden: "1700000000000000102" };
const RESPONSE_TIMEOUT_MS = 6_000;
const LEASE_MS = 2_000;
const REMINDER = "[리마인더";

const config = {
  agents: {
    ruda: { discordBotId: BOTS.ruda, name: "루다" },
    eden: { discordBotId: BOTS.eden, name: "이든" },
  },
  discord: {
    a2aRetry: { responseTimeoutMs: RESPONSE_TIMEOUT_MS, maxAttempts: 2, escalationMentionId: HUMAN },
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      loopGuard: { maxCollaboratePerPair: 100_000, maxMessagesPerThread: 100_000 },
      rateLimit: { threadCreationPerMinute: 100_000, messagePerChannelPerSecond: 100_000 },
    },
  },
};

const postgres = usePostgres();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

let emulator: DiscordEmulator | undefined;
const proxies: FaultProxy[] = [];
afterEach(async () => {
  await killAll();
  for (const proxy of proxies.splice(0)) await proxy.close();
});
afterAll(async () => {
  await emulator?.close();
});

async function discordEmulator(): Promise<DiscordEmulator> {
  emulator ??= await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "collab" }],
    users: [
      { id: BOTS.ruda, name: "ruda", bot: true },
      { id: BOTS.eden, name: "eden", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    rateLimits: false,
  });
  return emulator;
}

interface Sent {
  n: number;
  threadId: string;
  messageId: string;
}

async function gateway(
  label: string,
  o: {
    connectionString: string;
    stateDir?: string;
    leaseMs?: number;
    clockShiftMs?: number;
    responseTimeoutMs?: number;
  },
): Promise<GatewayChild> {
  const em = await discordEmulator();
  const settings: GatewaySettings = {
    stateDir: o.stateDir ?? tempDir(`a2a-faults-${label}-`),
    store: { kind: "postgres", connectionString: o.connectionString, leaseMs: o.leaseMs ?? LEASE_MS },
    discord: { kind: "emulator", apiUrl: em.apiUrl, bots: BOTS, hear: true },
    config:
      o.responseTimeoutMs === undefined
        ? config
        : {
            ...config,
            discord: {
              ...config.discord,
              a2aRetry: { ...config.discord.a2aRetry, responseTimeoutMs: o.responseTimeoutMs },
            },
          },
    ...(o.clockShiftMs === undefined ? {} : { clockShiftMs: o.clockShiftMs }),
  };
  const child = new GatewayChild(label, settings);
  await child.ready;
  return child;
}

/** Sends collaboration `n` (ruda asks eden) through the gateway. */
async function send(g: GatewayChild, n: number, topic: string): Promise<Sent> {
  const result = await g.call<{ status: string; threadId: string; messageId: string }>({
    method: "discordSend",
    args: {
      fromAgentId: "ruda",
      targetAgentId: "eden",
      topicId: `${topic}-${n}`,
      message: `${topic} ${n}: 리뷰 부탁해요`,
    },
  });
  if (result.status !== "sent") throw new Error(`send ${n}: ${JSON.stringify(result)}`);
  return { n, threadId: result.threadId, messageId: result.messageId };
}

const reminders = (em: DiscordEmulator, s: Sent) =>
  em.messages(s.threadId).filter((m) => m.content.startsWith(REMINDER));

const answer = (em: DiscordEmulator, s: Sent) =>
  em.postAsUser({ userId: BOTS.eden, channelId: s.threadId, content: `답변 ${s.n}: 확인했어요` });

const takenOverWarnings = (gs: GatewayChild[]) =>
  gs.flatMap((g) => g.warnings).filter((w) => /taken over by another process|took it over/.test(w));

describe("gateway processes on PostgreSQL under faults", { timeout: 90_000 }, () => {
  it("a process frozen past its lease, alone: the answers it then takes are not lost (none reminded)", async () => {
    const em = await discordEmulator();
    const g = await gateway("alone", { connectionString: await postgres().createDatabase() });
    const sent = await Promise.all(Array.from({ length: 10 }, (_, n) => send(g, n, "alone")));
    g.pause();
    await sleep(1.5 * LEASE_MS);
    // Answered while it is frozen: its clients hear them once it runs again, with the lease lapsed.
    await Promise.all(sent.map((s) => answer(em, s)));
    g.resume();
    await sleep(RESPONSE_TIMEOUT_MS + 2_000);
    expect(sent.filter((s) => reminders(em, s).length > 0).map((s) => s.n)).toEqual([]);
    const mentions = await g.call<Array<{ status: string }>>({ method: "mentions" });
    expect(mentions.map((m) => m.status)).toEqual(sent.map(() => "responded"));
    expect(takenOverWarnings([g])).toEqual([]);
  });

  it("a process frozen past its lease while another takes its mentions over: every answer ends its mention once", async () => {
    const em = await discordEmulator();
    const connectionString = await postgres().createDatabase();
    const a = await gateway("frozen", { connectionString });
    const b = await gateway("other", { connectionString });
    const sent = await Promise.all(Array.from({ length: 10 }, (_, n) => send(a, n, "pair")));
    a.pause();
    // Past the lease: b has taken a's mentions over by now.
    await sleep(LEASE_MS + 1_000);
    await Promise.all(sent.map((s) => answer(em, s)));
    await sleep(500);
    a.resume();
    await sleep(RESPONSE_TIMEOUT_MS + 2_000);
    expect(sent.filter((s) => reminders(em, s).length > 0).map((s) => s.n)).toEqual([]);
    for (const g of [a, b]) {
      const mentions = await g.call<Array<{ status: string }>>({ method: "mentions" });
      expect(mentions.map((m) => m.status)).toEqual(sent.map(() => "responded"));
    }
  });

  it("the database out of reach for longer than the lease while calls are made: each call waits and is posted once, none is reported taken over", async () => {
    const em = await discordEmulator();
    const url = await postgres().createDatabase();
    const proxy = await startFaultProxy({ host: postgres().host, port: postgres().port });
    proxies.push(proxy);
    const stateDir = tempDir("a2a-faults-outage-");
    const g = await gateway("outage", { connectionString: proxy.url(url), stateDir });
    proxy.refuse();
    const calls = Array.from({ length: 10 }, (_, n) =>
      send(g, n, "outage").then(
        (s) => ({ ok: true as const, s }),
        (error: unknown) => ({ ok: false as const, n, error: String(error) }),
      ),
    );
    await sleep(1.5 * LEASE_MS);
    proxy.heal();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    // A restart after the outage posts nothing a second time, and nothing that failed.
    await g.stop();
    const again = await gateway("outage-again", { connectionString: proxy.url(url), stateDir });
    await sleep(1_000);
    for (let n = 0; n < 10; n++) {
      const starters = em.messages().filter((m) => m.content.endsWith(` · outage-${n}`));
      // A reminder quotes the request too: under load the check may come after one.
      const mentions = em
        .messages()
        .filter((m) => m.content.includes(`outage ${n}:`) && !m.content.startsWith(REMINDER));
      expect([starters.length, mentions.length], `call ${n}: starters, mentions`).toEqual([1, 1]);
    }
    expect(takenOverWarnings([g, again])).toEqual([]);
  });

  it("a call rejected as its process stops during an outage is never carried out, though its write had landed with the reply lost", async () => {
    const em = await discordEmulator();
    const url = await postgres().createDatabase();
    const proxy = await startFaultProxy({ host: postgres().host, port: postgres().port });
    proxies.push(proxy);
    const stateDir = tempDir("a2a-faults-withdrawn-");
    const g = await gateway("withdrawn", { connectionString: proxy.url(url), stateDir });
    // The collaboration's first write commits, its reply is lost, and every retry is refused.
    const lost = proxy.resetAfterReply("unnest($2::text[]");
    const call = send(g, 0, "withdrawn").then(
      () => "acknowledged",
      (error: unknown) => `rejected: ${String(error)}`,
    );
    await lost;
    proxy.refuse();
    await sleep(300);
    await g.stop();
    expect(await call).toMatch(/^rejected/);
    const stored = await postgres().query(
      "SELECT id FROM a2a.actors WHERE status = 'active'",
      [],
      new URL(url).pathname.slice(1),
    );
    expect(stored, "the write landed").toHaveLength(1);
    proxy.heal();
    const again = await gateway("withdrawn-again", { connectionString: proxy.url(url), stateDir });
    await sleep(1_500);
    expect(em.messages().filter((m) => m.content.endsWith(" · withdrawn-0"))).toEqual([]);
    expect(again.warnings.join("\n")).toMatch(/withdrawn, not carried out/);
  });

  it("a SIGKILLed process restarted on its state directory takes its actors back at once, not after its lease", async () => {
    const em = await discordEmulator();
    const connectionString = await postgres().createDatabase();
    const stateDir = tempDir("a2a-faults-restart-");
    const leaseMs = 20_000;
    const g = await gateway("restart", { connectionString, stateDir, leaseMs });
    const s = await send(g, 0, "restart");
    const due = snowflakeTimestamp(s.messageId) + RESPONSE_TIMEOUT_MS;
    await sleep(due - 500 - Date.now());
    await g.kill();
    const killedAt = Date.now();
    await gateway("restart-again", { connectionString, stateDir, leaseMs });
    while (reminders(em, s).length === 0 && Date.now() < killedAt + leaseMs) await sleep(50);
    const [reminder] = reminders(em, s);
    if (reminder === undefined) throw new Error("no reminder within the lease");
    const afterKill = snowflakeTimestamp(reminder.id) - killedAt;
    console.log(`faults: first due post ${afterKill} ms after the kill (leaseMs ${leaseMs})`);
    // Its own lease would hold it back for 20 s.
    expect(afterKill).toBeLessThan(leaseMs / 2);
    expect(reminders(em, s)).toHaveLength(1);
  });

  it("a process whose clock is 30 s ahead recognizes the answer to its mention", async () => {
    const em = await discordEmulator();
    const g = await gateway("ahead", {
      connectionString: await postgres().createDatabase(),
      clockShiftMs: 30_000,
    });
    const s = await send(g, 0, "ahead");
    await answer(em, s);
    await sleep(RESPONSE_TIMEOUT_MS + 1_000);
    expect(reminders(em, s)).toEqual([]);
    const mentions = await g.call<Array<{ status: string }>>({ method: "mentions" });
    expect(mentions.map((m) => m.status)).toEqual(["responded"]);
    expect(g.warnings.join("\n")).toMatch(/clock is \d+ ms ahead of the database server's/);
  });

  // Due times are written on the scheduling process's clock: a process whose clock is off by `d` fires
  // the mentions it takes over `d` early or late (the tolerance docs/postgres.md states).
  it.each([
    ["ahead", 3_000],
    ["behind", -3_000],
  ])(
    "a mention taken over by a process whose clock is 3 s %s is reminded once, off by the skew",
    async (label, shiftMs) => {
      const em = await discordEmulator();
      const connectionString = await postgres().createDatabase();
      // Taken over well before it is due (a lease, a poll, a loaded machine), so that it can fire early.
      const responseTimeoutMs = 12_000;
      const a = await gateway(`skew-${label}-a`, { connectionString, responseTimeoutMs });
      await gateway(`skew-${label}-b`, { connectionString, clockShiftMs: shiftMs, responseTimeoutMs });
      const s = await send(a, 0, `skew-${label}`);
      await a.kill();
      const due = snowflakeTimestamp(s.messageId) + responseTimeoutMs;
      while (reminders(em, s).length === 0 && Date.now() < due + 10_000) await sleep(50);
      const [reminder] = reminders(em, s);
      if (reminder === undefined) throw new Error("no reminder");
      const offBy = snowflakeTimestamp(reminder.id) - due;
      console.log(
        `faults: clock ${shiftMs} ms off, the taken-over reminder posted ${offBy} ms after its due time`,
      );
      // Early by the skew when ahead; late by the skew (plus a poll) when behind.
      if (shiftMs > 0) expect(offBy).toBeLessThan(0);
      else expect(offBy).toBeGreaterThan(0);
      await sleep(1_000);
      expect(reminders(em, s)).toHaveLength(1);
    },
  );
});
