import {
  type FileHandle,
  mkdir,
  mkdtemp,
  open,
  readFile,
  readdir,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EVENT_LOG_FILE, EventLog } from "../../src/runtime/EventLog.js";
import { CAN_LIST_OPEN_FILES, openFilesUnder } from "../support/openFiles.js";
import {
  type A2AEvent,
  type A2AEventOf,
  A2AEventSchema,
  InvalidInputError,
} from "../../src/policies/index.js";

const TS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/** Counts the writes of every file handle from now on. */
async function fileWrites() {
  const probe = await open(join(dir, "probe"), "w");
  await probe.close();
  await rm(join(dir, "probe"));
  return vi.spyOn(Object.getPrototypeOf(probe) as FileHandle, "write");
}

function send(n: number, routeKey = `agent:main:main:agent:w${n % 7}:main`): A2AEventOf<"a2a.send"> {
  return {
    type: "a2a.send",
    ts: TS + n,
    routeKey,
    conversationId: `conv-${n}`,
    runId: `run-${n}`,
    data: { targetSessionKey: "agent:w:main", message: `message ${n}`, messageIntent: "question" },
  };
}

function collaborate(n: number): A2AEvent {
  return {
    type: "a2a.collaborate.requested",
    ts: TS + n,
    data: { fromAgentId: "main", toAgentId: "worker", collaborationId: `collab-${n}` },
  };
}

async function readLines(file: string): Promise<A2AEvent[]> {
  const text = await readFile(file, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => A2AEventSchema.parse(JSON.parse(line)));
}

const numbers = (events: A2AEvent[]) => events.map((event) => event.ts - TS);

let dir: string;
let warnings: string[];
const onWarning = (message: string) => warnings.push(message);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "a2a-eventlog-"));
  warnings = [];
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe("EventLog", () => {
  it("appends one JSON line per event to coordination-events.ndjson, in order", async () => {
    const log = await EventLog.open({ dir, onWarning });
    const events = [send(1), collaborate(2), send(3)];
    for (const event of events) await log.append(event);
    await log.close();

    expect(log.file).toBe(join(dir, EVENT_LOG_FILE));
    expect(await readLines(log.file)).toEqual(events);
    expect(warnings).toEqual([]);
  });

  it("writes appends that pile up in one write, and resolves each of them", async () => {
    const log = await EventLog.open({ dir, onWarning });
    const writes = await fileWrites();
    const events = Array.from({ length: 100 }, (_, n) => send(n));
    await Promise.all(events.map((event) => log.append(event)));

    expect(writes).toHaveBeenCalledTimes(1);
    expect(numbers(await readLines(log.file))).toEqual(events.map((_, n) => n));
    await log.close();
  });

  it("keeps the order of appends made while a write is in flight", async () => {
    const log = await EventLog.open({ dir, onWarning });
    const writes = await fileWrites();
    const first = log.append(send(0));
    await Promise.resolve();
    await Promise.resolve(); // the first write has started
    const rest = Array.from({ length: 20 }, (_, n) => log.append(send(n + 1)));
    await Promise.all([first, ...rest]);

    expect(writes.mock.calls.length).toBeLessThanOrEqual(3);
    expect(numbers(await readLines(log.file))).toEqual(Array.from({ length: 21 }, (_, n) => n));
    await log.close();
  });

  it("rotates before passing maxBytes, keeping `keep` rotated files, oldest deleted", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const maxBytes = lineBytes * 3;
    const log = await EventLog.open({ dir, maxBytes, keep: 2, onWarning });
    for (let n = 10; n < 30; n += 1) await log.append(send(n));
    await log.close();

    expect((await readdir(dir)).sort()).toEqual([
      EVENT_LOG_FILE,
      `${EVENT_LOG_FILE}.1`,
      `${EVENT_LOG_FILE}.2`,
    ]);
    const oldest = await readLines(join(dir, `${EVENT_LOG_FILE}.2`));
    const older = await readLines(join(dir, `${EVENT_LOG_FILE}.1`));
    const live = await readLines(log.file);
    // 20 lines at 3 a file: the live file holds the last 2, each rotated file a full 3.
    expect(numbers(oldest)).toEqual([22, 23, 24]);
    expect(numbers(older)).toEqual([25, 26, 27]);
    expect(numbers(live)).toEqual([28, 29]);
    for (const name of await readdir(dir))
      expect((await stat(join(dir, name))).size).toBeLessThanOrEqual(maxBytes);
  });

  it("rotates inside one batch of piled-up appends", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const log = await EventLog.open({ dir, maxBytes: lineBytes * 4, keep: 5, onWarning });
    const writes = await fileWrites();
    await Promise.all(Array.from({ length: 10 }, (_, n) => log.append(send(n + 10))));
    await log.close();

    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.2`)))).toEqual([10, 11, 12, 13]);
    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.1`)))).toEqual([14, 15, 16, 17]);
    expect(numbers(await readLines(log.file))).toEqual([18, 19]);
    expect(writes).toHaveBeenCalledTimes(3);
  });

  it("sends appends after a rotation to the new live file", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const log = await EventLog.open({ dir, maxBytes: lineBytes * 2, keep: 1, onWarning });
    await log.append(send(10));
    await log.append(send(11));
    await log.append(send(12)); // rotates: 10, 11 move to .1
    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.1`)))).toEqual([10, 11]);
    await log.append(send(13));
    await log.flush();

    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.1`)))).toEqual([10, 11]);
    expect(numbers(await readLines(log.file))).toEqual([12, 13]);
    await log.close();
  });

  it("with keep 0 deletes the full file instead of keeping it", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const log = await EventLog.open({ dir, maxBytes: lineBytes, keep: 0, onWarning });
    for (let n = 10; n < 13; n += 1) await log.append(send(n));
    await log.close();
    expect(await readdir(dir)).toEqual([EVENT_LOG_FILE]);
    expect(numbers(await readLines(log.file))).toEqual([12]);
  });

  it("writes an event larger than maxBytes alone in its own file", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const log = await EventLog.open({ dir, maxBytes: lineBytes * 2, keep: 3, onWarning });
    const big: A2AEvent = { ...send(11), data: { ...send(11).data, message: "x".repeat(lineBytes * 3) } };
    await Promise.all([log.append(send(10)), log.append(big), log.append(send(12))]);
    await log.close();
    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.2`)))).toEqual([10]);
    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.1`)))).toEqual([11]);
    expect(numbers(await readLines(log.file))).toEqual([12]);
  });

  it("when a rotation fails, warns naming the file and keeps appending to the live file", async () => {
    // A directory where the rotated file belongs: rm and rename both fail.
    await mkdir(join(dir, `${EVENT_LOG_FILE}.1`, "blocker"), { recursive: true });
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const log = await EventLog.open({ dir, maxBytes: lineBytes * 2, keep: 1, onWarning });
    for (let n = 10; n < 15; n += 1) await log.append(send(n));
    await log.close();

    // One attempt per maxBytes of growth, not one per append.
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`could not rotate ${log.file}`);
    expect(numbers(await readLines(log.file))).toEqual([10, 11, 12, 13, 14]);
  });

  it("continues an existing file after reopening, counting its size toward maxBytes", async () => {
    const lineBytes = Buffer.byteLength(`${JSON.stringify(send(10))}\n`);
    const first = await EventLog.open({ dir, maxBytes: lineBytes * 2, onWarning });
    await first.append(send(10));
    await first.close();
    const second = await EventLog.open({ dir, maxBytes: lineBytes * 2, onWarning });
    await second.append(send(11));
    await second.append(send(12)); // the file would pass 2 lines: rotates
    await second.close();
    expect(numbers(await readLines(join(dir, `${EVENT_LOG_FILE}.1`)))).toEqual([10, 11]);
    expect(numbers(await readLines(second.file))).toEqual([12]);
  });

  it("close() flushes appends that nobody awaited, then refuses new ones", async () => {
    const log = await EventLog.open({ dir, onWarning });
    void log.append(send(1));
    void log.append(send(2));
    const closing = log.close();
    await expect(log.append(send(3))).rejects.toThrow(/is closed/); // refused while closing
    await Promise.all([closing, log.close(), log.flush()]);
    expect(numbers(await readLines(log.file))).toEqual([1, 2]);
    await expect(log.append(send(3))).rejects.toThrow(
      /EventLog\.append: .*coordination-events\.ndjson is closed/,
    );
    await log.close(); // idempotent
  });

  it.skipIf(!CAN_LIST_OPEN_FILES)("close() closes the file even when its last fsync fails", async () => {
    const log = await EventLog.open({ dir, onWarning });
    await log.append(send(1));
    const probe = await open(join(dir, "probe"), "w");
    const fileHandle = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    vi.spyOn(fileHandle, "sync").mockRejectedValueOnce(new Error("EIO: i/o error, fsync"));
    await expect(log.close()).rejects.toThrow(/EIO/);
    expect(openFilesUnder(dir)).toEqual([]);
  });

  it("cuts a failed append back to the last whole line: a rejected event leaves no half line behind", async () => {
    const log = await EventLog.open({ dir, onWarning });
    await log.append(send(1));
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    type Write = (buffer: Buffer, offset?: number, length?: number) => Promise<unknown>;
    const realWrite = proto.write as unknown as Write;
    // The disk fills up mid-append: half the bytes land, then the write fails (through either call).
    const halfThenFail = async function (this: FileHandle, data: Buffer | string): Promise<never> {
      const buffer = Buffer.from(data);
      await realWrite.call(this, buffer, 0, buffer.length >> 1);
      throw new Error("ENOSPC: no space left on device, write");
    };
    vi.spyOn(proto, "write").mockImplementationOnce(halfThenFail as never);
    vi.spyOn(proto, "appendFile").mockImplementationOnce(halfThenFail as never);
    await expect(log.append(send(2))).rejects.toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    await log.append(send(3));
    await log.close();
    const text = await readFile(log.file, "utf8");
    expect(text).toBe(`${JSON.stringify(send(1))}\n${JSON.stringify(send(3))}\n`);
  });

  it("flush() waits for every queued append", async () => {
    const log = await EventLog.open({ dir, onWarning });
    for (let n = 0; n < 5; n += 1) void log.append(send(n));
    await log.flush();
    expect(numbers(await readLines(log.file))).toEqual([0, 1, 2, 3, 4]);
    await log.close();
  });

  it("starts on a new line after a torn last line, with a warning naming the file", async () => {
    const file = join(dir, EVENT_LOG_FILE);
    const whole = `${JSON.stringify(send(1))}\n`;
    await writeFile(file, `${whole}{"type":"a2a.se`);
    const log = await EventLog.open({ dir, onWarning });
    await log.append(send(2));
    await log.close();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
    const lines = (await readFile(file, "utf8")).split("\n");
    expect(lines).toEqual([whole.trimEnd(), `{"type":"a2a.se`, JSON.stringify(send(2)), ""]);
  });

  it("rejects a bad event with a clear error and loses none of the others", async () => {
    const log = await EventLog.open({ dir, onWarning });
    const circular = { ...send(2), data: { ...send(2).data } } as A2AEvent & {
      data: Record<string, unknown>;
    };
    circular.data.self = circular;
    const results = await Promise.allSettled([
      log.append(send(1)),
      log.append(null as unknown as A2AEvent),
      log.append(circular),
      log.append({ ...send(3), data: { ...send(3).data, size: 10n } } as unknown as A2AEvent),
      log.append(send(4)),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      "fulfilled",
      "rejected",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    const reasons = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(reasons[0]).toBeInstanceOf(InvalidInputError);
    expect(String(reasons[0])).toMatch(/EventLog\.append: event must be/);
    expect(String(reasons[1])).toMatch(/cannot serialise an event of type a2a\.send/);
    expect(String(reasons[2])).toMatch(/cannot serialise an event of type a2a\.send/);
    await log.close();
    expect(numbers(await readLines(log.file))).toEqual([1, 4]);
  });

  it("rejects bad options naming the parameter", async () => {
    await expect(EventLog.open({ dir: "" })).rejects.toThrow(
      /EventLog\.open: dir must be a non-empty string/,
    );
    await expect(EventLog.open({ dir, maxBytes: 0 })).rejects.toThrow(/EventLog\.open: maxBytes/);
    await expect(EventLog.open({ dir, keep: -1 })).rejects.toThrow(/EventLog\.open: keep/);
  });

  it("creates a missing state directory", async () => {
    const nested = join(dir, "a", "b");
    const log = await EventLog.open({ dir: nested, onWarning });
    await log.append(send(1));
    await log.close();
    expect(numbers(await readLines(join(nested, EVENT_LOG_FILE)))).toEqual([1]);
  });
});
