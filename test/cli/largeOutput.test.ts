import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type CliIO, streamWrite, writeText } from "../../src/cli/io.js";
import { jsonDocument, jsonPieces } from "../../src/cli/jsonText.js";
import type { ActorStatusRow, StatusReport } from "../../src/cli/status.js";
import { alignColumns, alignedLines } from "../../src/cli/textTable.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

function actor(i: number): ActorStatusRow {
  const active = i % 10 === 0;
  return {
    id: `collab-${String(i).padStart(8, "0")}`,
    machine: "collaborate",
    state: active ? "awaitingResponse > mention:pending" : "responded",
    status: active ? "active" : "done",
    location: active ? "live" : "archive",
    attempts: { kind: "mention", count: 1, max: 3 },
    nextDue: active
      ? {
          event: "after responseTimeout",
          at: T0 + i,
          atIso: new Date(T0 + i).toISOString(),
          inMs: i,
          timers: 1,
        }
      : null,
    startedAt: T0 - i,
    updatedAt: T0 - i,
    ageMs: i,
    ageFrom: "startedAt",
    file: `/state/${active ? "actors/shard-03.json" : "archive/archive-2026-11-22.json"}`,
    // A field left out of the document, as JSON.stringify leaves it out.
    problem: undefined,
  };
}

/** A `status --json` report of `n` actors, with a warning and an empty list. */
function report(n: number): StatusReport {
  return {
    stateDir: "/state",
    now: T0,
    lock: { kind: "none", lockFile: "/state/.lock" },
    actors: Array.from({ length: n }, (_, i) => actor(i)),
    exchanges: [],
    warnings: [{ file: "threads", problem: 'line 3: "quoted"\nand a newline' }],
    quarantined: [],
  };
}

/** A writable that takes nothing until `take()` lets its pending writes finish: a reader that stopped reading. */
function stalledReader(highWaterMark: number) {
  const received: string[] = [];
  const pending: Array<() => void> = [];
  const stream = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      received.push(chunk);
      pending.push(done);
    },
  });
  return {
    stream,
    received,
    take: () => {
      for (const done of pending.splice(0)) done();
    },
  };
}

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("jsonPieces: JSON.stringify(value, null, 2) in pieces", () => {
  it("writes a report of 10,000 actors as the same text, no piece longer than one actor", () => {
    const big = report(10_000);
    const pieces = [...jsonPieces(big)];
    expect(pieces.join("")).toBe(JSON.stringify(big, null, 2));
    const longestActor = Math.max(...big.actors.map((a) => JSON.stringify(a, null, 2).length));
    // Each actor is indented by four more spaces per line than JSON.stringify(actor) has.
    const lines = JSON.stringify(big.actors[0], null, 2).split("\n").length;
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(longestActor + 4 * lines);
    expect(pieces.length).toBeGreaterThan(10_000);
  });

  it("matches JSON.stringify on plain data at every depth, leaving out undefined members", () => {
    const values: unknown[] = [
      {
        a: [1, { b: [2, 3], c: {} }, []],
        skipped: undefined,
        text: 'a "quote"\nand a line',
        none: null,
        allSkipped: { x: undefined },
      },
      [],
      {},
      [[[]]],
      "text",
      7,
      null,
    ];
    for (const value of values)
      for (const depth of [0, 1, 2, 3, 6])
        expect([...jsonPieces(value, depth)].join("")).toBe(JSON.stringify(value, null, 2));
  });

  it("jsonDocument ends the document with a newline, as a printed line does", () => {
    expect([...jsonDocument({ a: [1] })].join("")).toBe(`${JSON.stringify({ a: [1] }, null, 2)}\n`);
  });
});

describe("alignedLines", () => {
  it("aligns as alignColumns does, a line at a time, reading the rows twice", () => {
    const rows = [
      ["ID", "MACHINE", "STATE"],
      ["collab-1", "collaborate", "awaitingResponse"],
      ["f-2", "a2aFlow", ""],
    ];
    let reads = 0;
    const lines = [
      ...alignedLines(() => {
        reads += 1;
        return rows;
      }),
    ];
    expect(lines).toEqual(alignColumns(rows).map((line) => `${line}\n`));
    expect(reads).toBe(2);
  });
});

describe("writeText", () => {
  it("batches pieces into writes of at most writeSize characters (a longer piece alone), in order", async () => {
    const writes: string[] = [];
    const io: CliIO = {
      out: () => expect.fail("out is not used when write is there"),
      err: () => undefined,
      write: async (text) => (writes.push(text), true),
    };
    const pieces = ["ab", "cd", "ef", "0123456789", "g", "h"];
    await writeText(io, pieces, 5);
    expect(writes).toEqual(["abcd", "ef", "0123456789", "gh"]);
  });

  it("stops asking for pieces once write says the reader has gone", async () => {
    let made = 0;
    function* pieces() {
      for (;;) yield `${++made}\n`;
    }
    let writes = 0;
    await writeText(
      { out: () => undefined, err: () => undefined, write: async () => ++writes < 3 },
      pieces(),
      1,
    );
    expect(writes).toBe(3);
    expect(made).toBeLessThan(5);
  });

  it("gives an IO without write the text as lines", async () => {
    const out: string[] = [];
    await writeText({ out: (line) => out.push(line), err: () => undefined }, ["a\nb", "c\n", "\n", "d"]);
    expect(out).toEqual(["a", "bc", "", "d"]);
  });
});

describe("streamWrite", () => {
  it("waits for a slow reader: the pieces are made as the reader takes them, not piled up in memory", async () => {
    const reader = stalledReader(64);
    let made = 0;
    function* pieces() {
      for (let i = 0; i < 1_000; i++) {
        made += 1;
        yield `${String(i).padStart(31, "0")}\n`; // 32 characters
      }
    }
    const io: CliIO = { out: () => undefined, err: () => undefined, write: streamWrite(reader.stream) };
    let finished = false;
    const writing = writeText(io, pieces(), 32).then(() => (finished = true));

    await ticks(5);
    // Stalled: two 32-character writes fill the 64-character buffer, the third waits for 'drain'.
    expect(made).toBeLessThanOrEqual(4);
    expect(reader.stream.writableLength).toBeLessThanOrEqual(64 + 32);
    for (let round = 0; round < 2_000 && !finished; round++) {
      reader.take();
      await ticks(1);
      expect(reader.stream.writableLength).toBeLessThanOrEqual(64 + 32);
    }
    await writing;
    expect(made).toBe(1_000);
    expect(reader.received.join("")).toBe([...pieces()].join(""));
  });

  it("stops, without an unhandled error, when the reader closes the pipe (EPIPE)", async () => {
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    const stream = new Writable({
      highWaterMark: 16,
      write(_chunk, _encoding, done) {
        setImmediate(() => done(epipe));
      },
    });
    let made = 0;
    function* pieces() {
      for (let i = 0; i < 1_000; i++) {
        made += 1;
        yield "0123456789abcdef\n";
      }
    }
    const write = streamWrite(stream);
    await writeText({ out: () => undefined, err: () => undefined, write }, pieces(), 17);
    expect(made).toBeLessThan(10);
    expect(await write("more")).toBe(false);
  });

  it("takes an EPIPE that comes after the last write, when nothing waits, as the end: no crash", async () => {
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    const stream = new Writable({
      write(_chunk, _encoding, done) {
        setImmediate(() => done(epipe));
      },
    });
    const write = streamWrite(stream);
    expect(await write("all of a small document\n")).toBe(true);
    await ticks(3);
    expect(stream.destroyed).toBe(true);
    expect(await write("more")).toBe(false);
  });
});
