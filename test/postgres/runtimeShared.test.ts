// Two runtimes (as two gateway processes would) on one PostgreSQL schema, in simulated time: a
// collaboration started by one is reminded by the other once the first stops, an answer seen by either
// ends the mention whichever runs it, mentions() lists every process's, and bad settings fail start().
import { afterEach, describe, expect, it } from "vitest";
import { type A2ARuntime, createA2ARuntime, type InboundDiscordMessage } from "../../src/index.js";
import { createPostgresStore, PostgresStoreError } from "../../src/persistence/postgres/index.js";
import { textLogger } from "../../src/runtime/logger.js";
import { ManualClock } from "../fixtures/manualClock.js";
import { useClockedRuntimes } from "../support/clockedRuntime.js";
import { usePostgres } from "../support/postgres.js";
import {
  BOTS,
  CHANNEL,
  FakeDiscord,
  runtimeConfig,
  tempStateDir,
  waitUntil,
} from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;
const postgres = usePostgres();
const clocked = useClockedRuntimes();
// A test that stops the server and fails before starting it again must not fail the next ones too.
afterEach(async () => {
  if (postgres().pid() === undefined) await postgres().startServer();
});

function gateway(url: string, clock: ManualClock, discord: FakeDiscord, onWarning?: (w: string) => void) {
  const store = createPostgresStore({ connectionString: url, leaseMs: 1_000, pollMs: 20 });
  return clocked(tempStateDir(), clock, {
    discord,
    store,
    ...(onWarning && { logger: textLogger(onWarning) }),
  }).r;
}

/** A FakeDiscord that also counts the reminder posts it was asked for, nonce duplicates included. */
class CountingDiscord extends FakeDiscord {
  reminderCalls = 0;

  override async sendMessage(p: Parameters<FakeDiscord["sendMessage"]>[0]) {
    if (p.content.startsWith("[리마인더")) this.reminderCalls += 1;
    return super.sendMessage(p);
  }
}

const followUps = (discord: FakeDiscord, threadId: string) =>
  discord.in(threadId).filter((m) => m.content.startsWith("[리마인더") || m.content.startsWith("⚠️"));

async function ownerOf(url: string, id: string): Promise<string | null | undefined> {
  const rows = await postgres().query<{ owner: string | null }>(
    "SELECT owner FROM a2a.actors WHERE id = $1",
    [id],
    new URL(url).pathname.slice(1),
  );
  return rows[0]?.owner;
}

/** eden's bot answering in the thread, as Discord delivers it. */
function edenAnswers(threadId: string, messageId: string, ts: number): InboundDiscordMessage {
  return {
    messageId,
    channelId: threadId,
    threadId,
    parentChannelId: CHANNEL,
    authorId: BOTS.eden,
    authorIsBot: true,
    content: "리뷰 끝났어요",
    mentionUserIds: [],
    ts,
  };
}

/** Two runtimes on a new database sharing one Discord; `a` has sent one collaboration (ruda asks eden). */
async function twoSharing<D extends FakeDiscord>(discord: D, warnA?: (w: string) => void) {
  const url = await postgres().createDatabase();
  const clock = new ManualClock(T0);
  const a = gateway(url, clock, discord, warnA);
  const b = gateway(url, clock, discord);
  await a.start();
  await b.start();
  const sent = await a.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" });
  if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
  return { url, clock, discord, a, b, sent };
}

describe("two runtimes on one PostgreSQL schema", { timeout: 30_000 }, () => {
  it("a collaboration outlives the process that started it: the other reminds and escalates, once each", async () => {
    const { url, clock, discord, a, b, sent } = await twoSharing(new FakeDiscord());
    const [mention] = await b.mentions();
    if (mention === undefined) throw new Error("b lists no mention");
    expect(mention).toMatchObject({
      threadId: sent.threadId,
      targetAgentId: "eden",
      status: "pending",
      attempts: 1,
    });

    await a.stop();
    await waitUntil(async () => (await ownerOf(url, mention.id)) != null, "b to take the collaboration over");
    await clock.advance(5 * MINUTE, () => b.idle());
    expect(followUps(discord, sent.threadId)).toHaveLength(1);
    await clock.advance(10 * MINUTE, () => b.idle());
    await clock.advance(60 * MINUTE, () => b.idle());
    expect(followUps(discord, sent.threadId).map((m) => m.content.split(" ")[0])).toEqual([
      "[리마인더",
      "[리마인더",
      "⚠️",
    ]);
    expect((await b.mentions()).map((m) => m.status)).toEqual(["escalated"]);
  });

  it("a process that froze past its lease loses its actors: the one that took them over reminds, it does not", async () => {
    const warnings: string[] = [];
    const { url, clock, discord, a, b, sent } = await twoSharing(new CountingDiscord(), (w) =>
      warnings.push(w),
    );
    const [mention] = await a.mentions();
    if (mention === undefined) throw new Error("a lists no mention");
    const aOwner = await ownerOf(url, mention.id);
    // a's lease lapses as if it had been frozen: b takes the collaboration over.
    await postgres().query(
      "UPDATE a2a.owners SET lease_until = clock_timestamp() - interval '1 ms' WHERE id = $1",
      [aOwner],
      new URL(url).pathname.slice(1),
    );
    await waitUntil(async () => {
      const owner = await ownerOf(url, mention.id);
      return owner != null && owner !== aOwner;
    }, "b to take the collaboration over");
    // Both hold the mention's timer in memory now; the reminder falls due for both.
    await clock.advance(5 * MINUTE, async () => {
      await a.idle();
      await b.idle();
    });
    expect(followUps(discord, sent.threadId).map((m) => m.content.split(" ")[0])).toEqual(["[리마인더"]);
    // Not even tried twice (Discord's nonce would have hidden a second post): a's write was refused first.
    expect(discord.reminderCalls).toBe(1);
    // Whichever a notices first: its refused write, its own renewal finding the lease lapsed, or the
    // poll after that renewal finding the actor owned elsewhere.
    await waitUntil(
      () =>
        warnings.some((w) => /taken over by (another process|other processes)|lease (had )?lapsed/.test(w)),
      "a to hear it",
    );
  });

  it("an answer seen by the process that does not run the mention ends it there", async () => {
    const { clock, discord, a, b, sent } = await twoSharing(new FakeDiscord());
    await clock.advance(MINUTE, () => a.idle());
    const decision = await b.handleDiscordMessage(
      edenAnswers(sent.threadId, "1400000000000009001", clock.now()),
    );
    expect(decision.action).not.toBe("drop");
    await waitUntil(
      async () => (await a.mentions())[0]?.status === "responded",
      "a's mention to end responded",
    );
    // Answered: no reminder falls due any more.
    await clock.advance(30 * MINUTE, () => a.idle());
    expect(followUps(discord, sent.threadId)).toEqual([]);
  });

  it("an answer that comes while the database is down: the call fails saying so, and the mention it reached still ends", async () => {
    const { clock, a, sent } = await twoSharing(new FakeDiscord());
    await postgres().stopServer("fast");
    const answer = a.handleDiscordMessage(edenAnswers(sent.threadId, "1400000000000009002", clock.now()));
    // The other processes cannot be told; a's own mention is told, its write retried until it lands.
    await expect(answer).rejects.toThrow(/ECONNREFUSED|connect/);
    await postgres().startServer();
    for (let i = 0; i < 60 && (await a.mentions().catch(() => []))[0]?.status !== "responded"; i += 1)
      await clock.advance(1_000);
    expect((await a.mentions()).map((m) => m.status)).toEqual(["responded"]);
  });

  it("a database restart in the middle: discordSend answers once its write is committed, and it is kept", async () => {
    const url = await postgres().createDatabase();
    const clock = new ManualClock(T0);
    const discord = new FakeDiscord();
    const a = gateway(url, clock, discord);
    await a.start();
    await postgres().stopServer("fast");
    let answered = false;
    const sending = a
      .discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" })
      .finally(() => (answered = true));
    // The write fails and is retried with backoff; nothing is posted and no caller hears before it lands.
    await clock.advance(3_000);
    expect(answered).toBe(false);
    expect(discord.messages).toEqual([]);
    await postgres().startServer();
    for (let i = 0; i < 60 && !answered; i += 1) await clock.advance(1_000);
    const sent = await sending;
    expect(sent.status).toBe("sent");
    await a.stop();
    const b = gateway(url, clock, new FakeDiscord());
    await b.start();
    expect((await b.mentions()).map((m) => m.status)).toEqual(["pending"]);
  });
});

describe(
  "start() with bad PostgreSQL settings fails, naming what is wrong, and holds nothing",
  { timeout: 30_000 },
  () => {
    async function failsToStart(connectionString: string): Promise<PostgresStoreError> {
      const stateDir = tempStateDir();
      const r: A2ARuntime = createA2ARuntime({
        stateDir,
        config: runtimeConfig,
        store: createPostgresStore({ connectionString }),
        logger: textLogger(() => {}),
      });
      const error = await r.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PostgresStoreError);
      // The state directory's lock was let go: a runtime on the lowdb store starts there.
      const after = createA2ARuntime({ stateDir, config: runtimeConfig, logger: textLogger(() => {}) });
      await after.start();
      await after.stop();
      return error as PostgresStoreError;
    }

    it("an unreachable server", async () => {
      const error = await failsToStart("postgresql://postgres@127.0.0.1:1/postgres");
      expect(error.message).toMatch(
        /postgres@127\.0\.0\.1:1\/postgres.*cannot reach the server \(ECONNREFUSED\)/,
      );
    });

    it("wrong credentials, without printing the password", async () => {
      const { user } = postgres().passwordLogin;
      const error = await failsToStart(
        postgres().connectionString("postgres", { user, password: "hunter2-wrong" }),
      );
      expect(error.message).toMatch(/refused the credentials/);
      expect(error.message).not.toContain("hunter2");
    });

    it("a database that does not exist", async () => {
      const error = await failsToStart(postgres().connectionString("no_such_db"));
      expect(error.message).toMatch(/database "no_such_db" does not exist/);
    });

    it("a user without the right to create the store's schema", async () => {
      const db = new URL(await postgres().createDatabase()).pathname.slice(1);
      const login = postgres().passwordLogin;
      await postgres().query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`, [], db);
      const error = await failsToStart(postgres().connectionString(db, login));
      expect(error.message).toMatch(/permission denied.*CREATE on the database \(to create schema "a2a"\)/);
    });
  },
);
