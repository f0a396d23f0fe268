// Several gateway processes on one PostgreSQL, with failover: 3 real processes
// (fixtures/gatewayProcess.ts), each a runtime on its own state directory, the shared store
// (createPostgresStore) and strict discord.js clients logged in to the Discord emulator running here.
// 300 collaborations are sent through them over 15 s; while their reminders fall due, the process
// owning live actors is SIGKILLed 10 times (a random one among those) and restarted on its state
// directory. Then every reminder and escalation must be in Discord exactly once, none later than its
// due time + leaseMs + 1 s (or, when a kill came after it was due and before it was posted, that kill
// + leaseMs + 1 s), and every acknowledged discordSend must be there. Real processes run in
// real time; the kill timings and the draws that pick the victims are seeded and printed
// (FAILOVER_SEED=<n>); a failure prints who owned the live actors over time.
import { afterAll, expect, it } from "vitest";
import { snowflakeTimestamp } from "../../src/testing/emulator/snowflake.js";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import { usePostgres } from "../support/postgres.js";
import { tempDir } from "../support/tempDir.js";
import { GatewayChild, killAll } from "./fixtures/gatewayChild.js";
import type { GatewaySettings } from "./fixtures/gatewayProtocol.js";
import { seededRandom } from "../support/seededRandom.js";

const SEED = Number(process.env.FAILOVER_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PROCESSES = 3;
const SENDS = 300;
const KILLS = 10;
const LEASE_MS = 2_000;
/** Each collaboration's reminders fall due 1, 2 and 3 timeouts after its mention (chained on the actual posts). */
const MENTION_TIMEOUT_MS = 8_000;
const MAX_ATTEMPTS = 3;
/**
 * A takeover's bound: a reminder or escalation is posted by leaseMs + 1 s after it was due, or after the
 * kill that stopped its owner from posting it (a loaded process posts a burst some hundreds of ms after
 * its due time: a kill in between leaves the rest to the next owner).
 */
const LATEST_MS = LEASE_MS + 1_000;
/** A kill comes only when nothing due longer ago than this is unposted: its victim had caught up. */
const CAUGHT_UP_MS = 1_000;
/** The least time between two kills: a takeover's bound. */
const KILL_GAP_MS = LATEST_MS;
/** One discordSend every 50 ms: 300 over 15 s. */
const SEND_SPACING_MS = 50;

const GUILD = "1600000000000000001";
const CHANNEL = "1600000000000000010";
const HUMAN = "1600000000000000900";
const BOTS = { ruda: "1600000000000000101", eden: "1600000000000000102" };

const config = {
  agents: {
    ruda: { discordBotId: BOTS.ruda, name: "루다" },
    eden: { discordBotId: BOTS.eden, name: "이든" },
  },
  discord: {
    a2aRetry: {
      responseTimeoutMs: MENTION_TIMEOUT_MS,
      maxAttempts: MAX_ATTEMPTS,
      escalationMentionId: HUMAN,
    },
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      // 300 collaborations between one pair within seconds: the guards would only reject them.
      loopGuard: { maxCollaboratePerPair: 100_000, maxMessagesPerThread: 100_000 },
      rateLimit: { threadCreationPerMinute: 100_000, messagePerChannelPerSecond: 100_000 },
    },
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

interface Acked {
  n: number;
  threadId: string;
  messageId: string;
  mentionId: string;
}

type Mention = { id: string; threadId: string; status: string; attempts: number };

const DELIVERIES = [
  { what: "reminder 1", prefix: `[리마인더 1/${MAX_ATTEMPTS}]` },
  { what: "reminder 2", prefix: `[리마인더 2/${MAX_ATTEMPTS}]` },
  { what: "escalation", prefix: "⚠️ 응답 없음" },
];

/**
 * A collaboration's reminders and escalation as Discord has them, in order, each with the time it
 * was due: a timeout after the previous delivery as Discord stamped it (the mention, then each post).
 * Stops at the first one not posted exactly once (`posts` then says how many there are).
 */
function deliveries(em: DiscordEmulator, a: Acked) {
  const inThread = em.messages(a.threadId);
  const found: Array<{ what: string; due: number; posts: number; postedAt?: number }> = [];
  const mention = inThread.find((m) => m.id === a.messageId);
  if (mention === undefined) return { mention: false, found };
  let previous = snowflakeTimestamp(mention.id);
  for (const { what, prefix } of DELIVERIES) {
    const posts = inThread.filter((m) => m.content.startsWith(prefix));
    const due = previous + MENTION_TIMEOUT_MS;
    const first = posts[0];
    if (posts.length !== 1 || first === undefined) {
      found.push({ what, due, posts: posts.length });
      break;
    }
    previous = snowflakeTimestamp(first.id);
    found.push({ what, due, posts: 1, postedAt: previous });
  }
  return { mention: true, found };
}

const postgres = usePostgres();

/** How many live actors each process (by pid; null: none) owns, read from the store's tables. */
async function liveActorsByPid(database: string): Promise<Map<number | null, number>> {
  const rows = await postgres().query<{ pid: number | null; n: string }>(
    `SELECT o.pid, count(*) AS n FROM a2a.actors a LEFT JOIN a2a.owners o ON o.id = a.owner
      WHERE a.status = 'active' GROUP BY o.pid ORDER BY o.pid`,
    [],
    database,
  );
  return new Map(rows.map((r) => [r.pid, Number(r.n)]));
}

/**
 * Who owns the live actors, every 200 ms while it runs, as lines "<time> <pid>:<count> …" (a line
 * when it changes): what a late reminder is read against.
 */
function sampleOwners(database: string, at: (time: number) => string) {
  const lines: string[] = [];
  let running = true;
  const sampling = (async () => {
    while (running) {
      const owned = await liveActorsByPid(database).catch(() => new Map<number | null, number>());
      const line = [...owned].map(([pid, n]) => `${pid ?? "none"}:${n}`).join(" ");
      if (!lines.at(-1)?.endsWith(` ${line}`)) lines.push(`${at(Date.now())} ${line}`);
      await sleep(200);
    }
  })();
  return {
    async stop(): Promise<string[]> {
      running = false;
      await sampling;
      return lines;
    },
  };
}

let emulator: DiscordEmulator | undefined;
let sampling: ReturnType<typeof sampleOwners> | undefined;

afterAll(async () => {
  // Whatever happened: no gateway process outlives this file, no query outlives the server.
  await sampling?.stop();
  await killAll();
  await emulator?.close();
});

it("3 processes, 300 collaborations, 10 SIGKILLs: every reminder and escalation posted once and in time, nothing acknowledged lost", async () => {
  console.log(`failover: FAILOVER_SEED=${SEED}`);
  const random = seededRandom(SEED);
  const connectionString = await postgres().createDatabase();
  const em = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "collab" }],
    users: [
      { id: BOTS.ruda, name: "ruda", bot: true },
      { id: BOTS.eden, name: "eden", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    // This test measures takeovers, with the runtime's limits off too: Discord's buckets (5 messages per
    // 5 s in the one channel) would spread the 300 starters over 5 minutes.
    rateLimits: false,
  });
  emulator = em;
  const settings = (stateDir: string): GatewaySettings => ({
    stateDir,
    store: { kind: "postgres", connectionString, leaseMs: LEASE_MS },
    discord: { kind: "emulator", apiUrl: em.apiUrl, bots: BOTS },
    config,
  });
  const stateDirs = Array.from({ length: PROCESSES }, (_, i) => tempDir(`a2a-failover-${i}-`));
  /** Every process started, killed ones included (their warnings count too). */
  const incarnations: GatewayChild[] = [];
  const spawnGateway = (slot: number) => {
    const gateway = new GatewayChild(
      `${slot}.${incarnations.length + 1}`,
      settings(stateDirs[slot] as string),
    );
    incarnations.push(gateway);
    return gateway;
  };
  const started = Date.now();
  /** A time as seconds since the processes were started, as every line this test prints gives it. */
  const at = (time: number) => `${((time - started) / 1000).toFixed(1)} s`;
  const phase = (what: string) => console.log(`failover: ${what} at ${at(Date.now())}`);
  const gateways = stateDirs.map((_, slot) => spawnGateway(slot));
  await Promise.all(gateways.map((g) => g.ready));
  phase("3 processes ready");

  // ---- 300 collaborations, one every SEND_SPACING_MS, round robin over the processes that are up ----
  // Spread out, so that what falls due in one lease is a burst Discord's rate limit lets through in
  // time (two bots: 2 × 50 requests/s); sends and kills overlap.
  const sendsStart = Date.now();
  const acked: Acked[] = [];
  const rejected: unknown[] = [];
  const unacknowledged: string[] = [];
  const sending = (async () => {
    const calls: Array<Promise<void>> = [];
    for (let n = 0; n < SENDS; n++) {
      await sleep(sendsStart + n * SEND_SPACING_MS - Date.now());
      const up = gateways.filter((g) => g.up);
      const gateway = up[n % up.length] ?? (gateways[n % PROCESSES] as GatewayChild);
      const [from, to] = n % 2 === 0 ? ["ruda", "eden"] : ["eden", "ruda"];
      const call = gateway.call<{ status: string; threadId: string; messageId: string; mentionId: string }>({
        method: "discordSend",
        args: {
          fromAgentId: from,
          targetAgentId: to,
          topicId: `ticket-${n}`,
          message: `요청 ${n}: 리뷰 부탁해요`,
        },
      });
      calls.push(
        call.then(
          (result) => {
            if (result.status !== "sent") rejected.push(result);
            else
              acked.push({
                n,
                threadId: result.threadId,
                messageId: result.messageId,
                mentionId: result.mentionId,
              });
          },
          // Its process was killed before it answered: not acknowledged, so not owed.
          () => void unacknowledged.push(`#${n}`),
        ),
      );
    }
    await Promise.all(calls);
  })();

  // ---- 10 SIGKILLs while the reminders fall due ----
  const windowStart = sendsStart + MENTION_TIMEOUT_MS;
  // The last escalation is due 3 timeouts after the last mention (later if its reminders were late).
  const windowEnd = sendsStart + (SENDS - 1) * SEND_SPACING_MS + MAX_ATTEMPTS * MENTION_TIMEOUT_MS;
  // One failure at a time, as the bound assumes: a kill waits until the previous one is taken over
  // (no live actor without a live owner, nothing due a second ago unposted) and its victim runs again.
  // A kill before that can hit the process that has just claimed the previous victim's actors before
  // it posted what was overdue, or leave no running process to take over (a restart takes seconds):
  // those posts then wait for a second takeover, beyond any single takeover's bound.
  const spare = windowEnd - 500 - windowStart - (KILLS - 1) * KILL_GAP_MS;
  if (spare < 0) throw new Error(`${KILLS} kills ${KILL_GAP_MS} ms apart do not fit in the reminder window`);
  const killAt = Array.from({ length: KILLS }, () => random() * spare)
    .sort((a, b) => a - b)
    .map((offset, i) => windowStart + offset + i * KILL_GAP_MS);
  const database = decodeURIComponent(new URL(connectionString).pathname.slice(1));
  const takenOver = async (): Promise<boolean> => {
    if (!gateways.every((g) => g.up)) return false;
    const alive = new Set(gateways.map((g) => g.pid));
    const owned = await liveActorsByPid(database);
    if ([...owned.keys()].some((pid) => pid === null || !alive.has(pid))) return false;
    const overdue = Date.now() - CAUGHT_UP_MS;
    return acked.every((a) => deliveries(em, a).found.every((d) => d.posts === 1 || d.due > overdue));
  };
  const kills: Array<{ at: number; slot: number; owned: number; waited: number }> = [];
  const ownership = sampleOwners(database, at);
  sampling = ownership;
  for (const time of killAt) {
    await sleep(time - Date.now());
    const settling = Date.now();
    while (!(await takenOver()) && Date.now() < settling + 10_000) await sleep(100);
    const waited = Date.now() - settling;
    // A random process among those that own live actors (actors stay where they were taken over, so
    // most end up on few processes): each kill is a takeover.
    const owned = await liveActorsByPid(database);
    const up = gateways
      .map((g, slot) => ({ g, slot, owned: owned.get(g.pid) ?? 0 }))
      .filter((c) => c.g.alive);
    const owners = up.filter((c) => c.owned > 0);
    const candidates = owners.length > 0 ? owners : up;
    const victim = candidates[Math.floor(random() * candidates.length)];
    if (victim === undefined) throw new Error("no gateway process is up to kill");
    // The moment it stops posting: the signal, not the exit seen later.
    const killedAt = Date.now();
    await victim.g.kill();
    kills.push({ at: killedAt, slot: victim.slot, owned: victim.owned, waited });
    gateways[victim.slot] = spawnGateway(victim.slot);
  }
  await sending;
  expect(rejected).toEqual([]);
  phase(
    `${acked.length} sends acknowledged, ${unacknowledged.length} cut short by a kill (${unacknowledged.join(" ")})`,
  );
  console.log(
    `failover: kills (time, process slot, live actors it owned, ms waited for the previous takeover and restart): ${kills
      .map((k) => `${at(k.at)}:${k.slot}:${k.owned}:${k.waited}`)
      .join(" ")}`,
  );

  // ---- until every escalation is in, or clearly late ----
  const escalated = (a: Acked) => em.messages(a.threadId).some((m) => m.content.startsWith("⚠️ 응답 없음"));
  const deadline = windowEnd + MAX_ATTEMPTS * LATEST_MS + 5_000;
  while (!acked.every(escalated) && Date.now() < deadline) await sleep(100);
  await Promise.all(gateways.map((g) => g.ready));
  phase("every escalation in");

  // ---- every reminder and escalation once, in time ----
  const problems: string[] = [];
  /** How late each delivery was: with no kill between its due time and its post, and with one. */
  const lateness = { noKillBetween: [] as number[], killBetween: [] as number[] };
  for (const a of acked) {
    const { mention, found } = deliveries(em, a);
    if (!mention)
      problems.push(`#${a.n}: its acknowledged message ${a.messageId} is not in thread ${a.threadId}`);
    for (const { what, due, posts, postedAt } of found) {
      if (postedAt === undefined) {
        problems.push(`#${a.n} (thread ${a.threadId}): ${what} posted ${posts} times`);
        continue;
      }
      // The last kill between its due time and its post: its owner may have died with it unposted.
      const killed = kills.filter((k) => k.at >= due && k.at <= postedAt).at(-1);
      const from = killed?.at ?? due;
      (killed === undefined ? lateness.noKillBetween : lateness.killBetween).push(postedAt - due);
      const when = `due ${at(due)}, posted ${at(postedAt)}${killed === undefined ? "" : `, a kill at ${at(killed.at)}`}`;
      if (postedAt < due) problems.push(`#${a.n}: ${what} ${due - postedAt} ms early (${when})`);
      if (postedAt > from + LATEST_MS) problems.push(`#${a.n}: ${what} ${postedAt - due} ms late (${when})`);
    }
  }
  const spread = (ms: number[]) => {
    const sorted = [...ms].sort((x, y) => x - y);
    const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
    return `${sorted.length} posts, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${sorted.at(-1) ?? 0} ms`;
  };
  console.log(
    `failover: lateness with no kill between due and post: ${spread(lateness.noKillBetween)}; with one: ${spread(lateness.killBetween)}`,
  );
  const timeline = await ownership.stop();
  sampling = undefined;
  if (problems.length > 0)
    console.log(`failover: live actors by owner pid over time:\n${timeline.join("\n")}`);
  expect({ problems: problems.slice(0, 20), count: problems.length }).toEqual({ problems: [], count: 0 });
  // Nothing twice anywhere (a send cut short by a kill included), and no failure notice.
  const seen = new Set<string>();
  const twice = em.messages().filter((m) => seen.size === seen.add(`${m.channelId} ${m.content}`).size);
  expect(twice).toEqual([]);
  expect(em.messages().filter((m) => m.content.startsWith("⚠️ 협업"))).toEqual([]);

  // ---- every acknowledged discordSend is there: its mention, escalated, on every process ----
  const lists = await Promise.all(gateways.map((g) => g.call<Mention[]>({ method: "mentions" })));
  for (const [slot, list] of lists.entries()) {
    const byId = new Map(list.map((m) => [m.id, m]));
    const missing = acked.filter((a) => byId.get(a.mentionId)?.status !== "escalated");
    expect(
      missing.slice(0, 5).map((a) => ({ n: a.n, mention: byId.get(a.mentionId) ?? "missing" })),
      `process ${slot}: ${missing.length} mentions missing or not escalated`,
    ).toEqual([]);
  }
  await Promise.all(gateways.map((g) => g.stop()));
  // A process killed while holding its state directory leaves its lock behind: the next one takes it over.
  const warnings = incarnations.flatMap((g) => g.warnings).filter((w) => !/took over the stale lock/.test(w));
  expect(warnings).toEqual([]);
}, 120_000);
