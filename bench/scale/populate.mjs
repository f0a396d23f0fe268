// Populates a state dir for the scale benchmark: `node bench/scale/populate.mjs <dir> <live>` (plain
// node on the built dist/; not measured). A running runtime makes one template per agent pair (a live
// mention waiting for its answer, a collaboration answered and finished); the state dir is then written
// by cloning those records with fresh ids, threads, topics and times, through the store's own
// persistence (LowdbSnapshotStore for live records and the hourly archive, ThreadStateStore with
// ThreadState's expiry for the thread state), so the files are what the runtime would have written,
// without a million discordSend calls.
import { AsyncLocalStorage } from "node:async_hooks";
import { Buffer } from "node:buffer";
import { mkdtemp, readFile, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createA2ARuntime } from "../../dist/index.js";
import { LowdbSnapshotStore } from "../../dist/persistence/index.js";
import { parseRecordLine } from "../../dist/persistence/recordLine.js";
import { ThreadState } from "../../dist/runtime/ThreadState.js";
import { ThreadStateStore } from "../../dist/runtime/threadStatePersistence.js";
import {
  ARCHIVE_DAYS,
  BOT_IDS,
  CHANNEL,
  CLEANUP_MAX_AGE_MS,
  CountingDiscord,
  PAIRS,
  SEND_SPACING_MS,
  T0,
  config,
} from "./common.mjs";

const DAY = 86_400_000;
/** Ids the template's Discord hands out; each clone j moves them to CLONE_BASE + j × ID_SPAN. */
const TEMPLATE_BASE = 1_410_000_000_000_000_000n;
const CLONE_BASE = 1_420_000_000_000_000_000n;
const ID_SPAN = 10_000n;
const TEMPLATE_ID = /\b1410000000000\d{6}\b/g;
/** A time of 2025–2026 in ms: 13 digits starting 17 (snowflakes have 19 digits). */
const TIME = /\b17\d{11}\b/g;
const COLLAB_ID = /collab-[0-9a-f-]{36}/g;
const TOPIC = /\b(live|done)-(\d+)\b/g;
const FINISHED_PER_LIVE = 10;

const text = (i) =>
  `PR #${1000 + i} 리뷰 부탁해요: src/auth/session.ts 의 토큰 갱신이 만료 직전 요청에서 401 을 돌려줍니다.`;

/** Runs the runtime once per pair: PAIRS.length live mentions and as many answered collaborations. */
async function makeTemplates(dir) {
  const clock = new AsyncLocalStorage();
  const discord = new CountingDiscord(TEMPLATE_BASE);
  const warnings = [];
  const runtime = createA2ARuntime({
    stateDir: dir,
    config,
    discord,
    now: () => clock.getStore() ?? T0,
    onWarning: (w) => warnings.push(w),
  });
  await runtime.start();
  const finished = await Promise.all(
    PAIRS.map(([fromAgentId, targetAgentId], k) =>
      clock.run(T0 - DAY + k, () =>
        runtime.discordSend({ fromAgentId, targetAgentId, topicId: `done-${k}`, message: text(k) }),
      ),
    ),
  );
  // Each is answered by its target's bot in its thread, ten minutes later: done, archived, observed.
  for (const [k, sent] of finished.entries()) {
    const at = T0 - DAY + 600_000 + k;
    await clock.run(at, () =>
      runtime.handleDiscordMessage({
        messageId: discord.nextId(),
        channelId: sent.threadId,
        threadId: sent.threadId,
        parentChannelId: CHANNEL,
        authorId: BOT_IDS[PAIRS[k][1]],
        authorIsBot: true,
        content: "확인했어요, 반영할게요",
        mentionUserIds: [],
        ts: at,
      }),
    );
  }
  await Promise.all(
    PAIRS.map(([fromAgentId, targetAgentId], k) =>
      clock.run(T0 + k * SEND_SPACING_MS, () =>
        runtime.discordSend({ fromAgentId, targetAgentId, topicId: `live-${k}`, message: text(k) }),
      ),
    ),
  );
  await runtime.stop();
  if (warnings.length > 0)
    throw new Error(`warnings while making templates: ${warnings.slice(0, 3).join("; ")}`);
}

/**
 * The records of a store's live shards (`shard-*.ndjson`: a header line, then one record line each) or
 * archive hours (`archive-*.ndjson`, one record a line), after the store closed (no journal left).
 */
async function readRecords(dir) {
  const records = [];
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".ndjson")) continue;
    const lines = (await readFile(join(dir, name), "utf8")).split("\n").filter(Boolean);
    if (name.startsWith("shard-")) lines.shift();
    records.push(...lines.map((line) => parseRecordLine(Buffer.from(line))));
  }
  return records;
}

/** The template's JSON with clone j's ids, topic and times (shifted by `shift` ms). */
function cloneText(json, j, shift) {
  const hex = j.toString(16).padStart(12, "0");
  return json
    .replace(TEMPLATE_ID, (id) => String(CLONE_BASE + BigInt(j) * ID_SPAN + (BigInt(id) - TEMPLATE_BASE)))
    .replace(TIME, (t) => String(Number(t) + shift))
    .replace(COLLAB_ID, (id) => `${id.slice(0, 22)}8000-${hex}`)
    .replace(TOPIC, (_, kind) => `${kind}-${j}`);
}

/** Opens the thread state of `stateDir` into `threads` with the runtime's own store (no warning expected). */
function openThreads(stateDir, threads) {
  const onWarning = (w) => {
    throw new Error(w);
  };
  return ThreadStateStore.open({ stateDir, threads, now: () => T0, onWarning });
}

/** Thread-state entries by the template collaboration they belong to (by its ids and topic). */
function groupEntries(entries, templates) {
  const owner = new Map();
  for (const [k, record] of templates.entries()) {
    for (const id of JSON.stringify(record).match(TEMPLATE_ID) ?? []) owner.set(id, k);
    owner.set(record.meta.topicId, k);
  }
  const groups = templates.map(() => []);
  const shared = [];
  for (const entry of entries) {
    const json = JSON.stringify(entry);
    const key =
      (json.match(TEMPLATE_ID) ?? []).find((id) => owner.has(id)) ?? json.match(/(live|done)-\d+/)?.[0];
    const k = key === undefined ? undefined : owner.get(key);
    (k === undefined ? shared : groups[k]).push(json);
  }
  return { groups, shared };
}

async function populate(dir, live) {
  const started = performance.now();
  const work = await mkdtemp(join(tmpdir(), "a2a-scale-template-"));
  try {
    await makeTemplates(work);
    const liveTemplates = await readRecords(join(work, "actors"));
    const doneTemplates = await readRecords(join(work, "archive"));
    if (liveTemplates.length !== PAIRS.length || doneTemplates.length !== PAIRS.length)
      throw new Error(`templates: ${liveTemplates.length} live, ${doneTemplates.length} finished`);
    const byTopic = (records) =>
      records.sort((a, b) => Number(a.meta.topicId.split("-")[1]) - Number(b.meta.topicId.split("-")[1]));
    byTopic(liveTemplates);
    byTopic(doneTemplates);
    // Read as written: nothing of the templates expires.
    const forever = {
      threadReuseTTL: Infinity,
      observerHistoryLimit: Infinity,
      observerHistoryTTL: Infinity,
      participantTTL: Infinity,
      cleanupMaxAgeMs: Infinity,
    };
    const template = new ThreadState(forever, () => T0);
    await (await openThreads(work, template)).close();
    const threadState = template.entries();
    const liveGroups = groupEntries(threadState, liveTemplates);
    const doneGroups = groupEntries(threadState, doneTemplates);
    const machineVersions = Object.fromEntries(liveTemplates.map((r) => [r.machineId, r.machineVersion]));
    const storeOptions = (d) => ({
      dir: d,
      now: () => T0,
      machineVersions,
      cleanupMaxAgeMs: CLEANUP_MAX_AGE_MS,
      onWarning: (w) => {
        throw new Error(w);
      },
    });

    const limits = {
      threadReuseTTL: 21_600_000,
      observerHistoryLimit: 50,
      observerHistoryTTL: DAY,
      participantTTL: DAY,
      cleanupMaxAgeMs: CLEANUP_MAX_AGE_MS,
    };
    const liveThreads = new Set();
    const threads = new ThreadState(
      limits,
      () => T0,
      (threadId) => liveThreads.has(threadId),
    );
    const threadEntries = [];

    // Live: clone i of template k is sent at T0 + i × SEND_SPACING_MS, so it falls due one every 2 ms.
    const records = [];
    for (let i = 0; i < live; i++) {
      const k = i % PAIRS.length;
      const shift = (i - k) * SEND_SPACING_MS;
      const record = JSON.parse(cloneText(JSON.stringify(liveTemplates[k]), i, shift));
      records.push(record);
      liveThreads.add(record.meta.threadId);
      for (const json of liveGroups.groups[k]) threadEntries.push(JSON.parse(cloneText(json, i, shift)));
    }
    const store = await LowdbSnapshotStore.open(storeOptions(dir));
    await store.putAll(records);
    await store.close();
    records.length = 0;

    // Finished: 10 per live one, evenly over the ARCHIVE_DAYS days before T0, written a day at a time
    // by a store of their own and moved into the state dir (a store reads every file it holds).
    const finished = live * FINISHED_PER_LIVE;
    const perDay = Math.ceil(finished / ARCHIVE_DAYS);
    // UTC days, as the store dates its archive files.
    const first = Math.floor(T0 / DAY) * DAY - ARCHIVE_DAYS * DAY;
    const templateAt = doneTemplates.map((r) => r.meta.sentAt);
    for (let day = 0; day < ARCHIVE_DAYS; day++) {
      const dayDir = await mkdtemp(join(tmpdir(), "a2a-scale-day-"));
      try {
        const dayRecords = [];
        for (let f = day * perDay; f < Math.min(finished, (day + 1) * perDay); f++) {
          const k = f % PAIRS.length;
          // Spread over the day, clear of midnight so a record's day is the day it was sent.
          const at =
            first + day * DAY + 60_000 + Math.floor(((f - day * perDay) / perDay) * (DAY - 1_200_000));
          const shift = at - templateAt[k];
          dayRecords.push(JSON.parse(cloneText(JSON.stringify(doneTemplates[k]), live + f, shift)));
          for (const json of doneGroups.groups[k])
            threadEntries.push(JSON.parse(cloneText(json, live + f, shift)));
        }
        const dayStore = await LowdbSnapshotStore.open(storeOptions(dayDir));
        await dayStore.putAll(dayRecords);
        await dayStore.close();
        for (const name of await readdir(join(dayDir, "archive")))
          await rename(join(dayDir, "archive", name), join(dir, "archive", name));
      } finally {
        await rm(dayDir, { recursive: true, force: true });
      }
    }

    // The thread state: every clone's entries, less what the runtime's expiry would have dropped by T0.
    threads.load([...threadEntries, ...liveGroups.shared.map((j) => JSON.parse(j))]);
    threadEntries.length = 0;
    threads.expire(T0);
    const kept = threads.entries();
    const counts = {};
    for (const entry of kept) counts[entry.c] = (counts[entry.c] ?? 0) + 1;
    const saved = new ThreadState(limits, () => T0);
    const threadStore = await openThreads(dir, saved);
    saved.load(kept);
    await threadStore.fold();
    await threadStore.close();
    return { live, finished, threadEntries: counts, seconds: (performance.now() - started) / 1000 };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const [dir, live] = process.argv.slice(2);
if (dir === undefined || !(Number(live) > 0))
  throw new Error("usage: populate.mjs <dir> <live collaborations>");
console.log(JSON.stringify(await populate(dir, Number(live))));
