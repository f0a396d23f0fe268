import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ActorRecord } from "../../src/persistence/index.js";
import {
  CorruptSnapshotError,
  parseRecordLine,
  plainRecord,
  recordLine,
  snapshotOutline,
} from "../../src/persistence/recordLine.js";

afterEach(() => vi.restoreAllMocks());

/** What makes a snapshot large enough to be split (small ones are written whole). */
const PAGE = "p".repeat(1_100);

/** A parent waiting, its invoked child waiting too, each with a context. */
function record(id: string, text = "요청"): ActorRecord {
  return {
    id,
    machineId: "collaborate",
    machineVersion: 1,
    snapshot: {
      status: "active",
      value: { waiting: "reply" },
      historyValue: {},
      context: { text, n: 1, page: PAGE },
      children: {
        mention: {
          snapshot: { status: "active", value: "pending", context: { text }, children: {} },
          src: "mention",
          syncSnapshot: false,
        },
      },
    },
    delayed: [
      { id: "remind", source: ["mention"], target: ["mention"], event: { type: "REMIND" }, dueAt: 5 },
    ],
    status: "active",
    updatedAt: 1,
    meta: { threadId: "t1" },
  };
}

const read = (line: string) => parseRecordLine(Buffer.from(line)) as ActorRecord;

/** The JSON.parse calls made while `run` runs. */
function parsesIn(run: () => void): string[] {
  const parse = vi.spyOn(JSON, "parse");
  run();
  const texts = parse.mock.calls.map(([text]) => text);
  parse.mockRestore();
  return texts;
}

describe("records read in the same state", () => {
  it("share one parsed outline, frozen: each state's outline is parsed once, not once per record", () => {
    const lines = Array.from({ length: 100 }, (_, i) => recordLine(record(`c${i}`, `요청 ${i}`)));
    const outline = lines[0]?.split("\t")[1];
    let records: ActorRecord[] = [];
    const parsed = parsesIn(() => (records = lines.map(read)));
    expect(parsed.filter((text) => text === outline).length).toBeLessThanOrEqual(1);
    const shared = snapshotOutline(records[0] as ActorRecord) as { value: object; children: object };
    for (const r of records) expect(snapshotOutline(r)).toBe(shared);
    expect(Object.isFrozen(shared.value) && Object.isFrozen(shared.children)).toBe(true);
    // Each record's own parts are still its own.
    expect(records.map((r) => (r.snapshot as { context: { text: string } }).context.text)).toEqual(
      records.map((_, i) => `요청 ${i}`),
    );
  });
  it("of a finished actor are not kept: its outline holds its own output, and is frozen all the same", () => {
    const done = (id: string): ActorRecord => {
      const r = record(id);
      return {
        ...r,
        status: "done",
        snapshot: { ...(r.snapshot as object), status: "done", output: { id } },
      };
    };
    const [a, b] = [read(recordLine(done("d1"))), read(recordLine(done("d1")))];
    expect(snapshotOutline(a)).toEqual(snapshotOutline(b));
    expect(snapshotOutline(a)).not.toBe(snapshotOutline(b));
    expect(Object.isFrozen((snapshotOutline(a) as { output: object }).output)).toBe(true);
  });
});

describe("a record line", () => {
  it("is the record without its snapshot (id first), the snapshot's outline, and the snapshot, split by tabs", () => {
    const r = record("c1");
    const [head, outline, snapshot, ...rest] = recordLine(r).split("\t");
    expect(rest).toEqual([]);
    expect(head?.startsWith('{"id":"c1",')).toBe(true);
    const { snapshot: _, ...withoutSnapshot } = r;
    expect(JSON.parse(head ?? "")).toEqual(withoutSnapshot);
    expect(JSON.parse(outline ?? "")).toEqual({
      status: "active",
      value: { waiting: "reply" },
      historyValue: {},
      children: {
        mention: {
          snapshot: { status: "active", value: "pending", children: {} },
          src: "mention",
          syncSnapshot: false,
        },
      },
    });
    expect(snapshot).toBe(JSON.stringify(r.snapshot));
  });

  it("read, keeps its snapshot's bytes apart from the line's: the buffer read into is reused for the next file", () => {
    const r = record("c1");
    const line = Buffer.from(recordLine(r));
    const read = parseRecordLine(line) as ActorRecord;
    line.fill(0x20);
    expect(read.snapshot).toEqual(r.snapshot);
  });

  it("reads back as the record, parsing only the record and the outline: the snapshot is parsed when read, anew each time", () => {
    const r = record("c1");
    let stored: ActorRecord | undefined;
    const atRead = parsesIn(() => (stored = read(recordLine(r))));
    // The outline is parsed unless a record in the same state was read before.
    expect(atRead.length).toBeGreaterThanOrEqual(1);
    expect(atRead.length).toBeLessThanOrEqual(2);
    expect(atRead[0]?.startsWith('{"id":"c1"')).toBe(true);
    expect(atRead.some((text) => text.includes("요청"))).toBe(false);
    const s = stored as ActorRecord;
    expect(parsesIn(() => snapshotOutline(s))).toEqual([]);
    expect(snapshotOutline(s)).toMatchObject({ value: { waiting: "reply" } });

    expect(s).toEqual(r);
    const first = s.snapshot as { context: { n: number } };
    first.context.n = 99;
    expect(s.snapshot).toEqual(r.snapshot);
    expect(s.snapshot).not.toBe(s.snapshot);
    // A copy for a caller holds its snapshot as a value.
    const plain = plainRecord(s);
    expect(Object.getOwnPropertyDescriptor(plain, "snapshot")).toMatchObject({ value: r.snapshot });
    expect(plainRecord(r)).toBe(r);
  });

  it("is written again from the stored bytes, the snapshot unparsed", () => {
    const line = recordLine(record("c1"));
    const stored = read(line);
    expect(parsesIn(() => expect(recordLine(stored)).toBe(line))).toEqual([]);
  });

  it("keeps a damaged snapshot as it is, and names its actor when it is read (CorruptSnapshotError)", () => {
    const line = recordLine(record("c1"));
    const damaged = `${line.slice(0, line.lastIndexOf("\t") + 1)}{"status":"act`;
    const stored = read(damaged);
    expect(stored.id).toBe("c1");
    expect(() => stored.snapshot).toThrow(CorruptSnapshotError);
    expect(() => structuredClone(stored)).toThrow(/stored snapshot of actor "c1" is not JSON/);
    const error = (() => {
      try {
        return stored.snapshot;
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toMatchObject({ code: "CORRUPT_SNAPSHOT", name: "CorruptSnapshotError", id: "c1" });
    // Nothing is lost: written again, the bytes are as they were.
    expect(recordLine(stored)).toBe(damaged);
  });

  it("refuses a line of two parts, or whose first part holds a snapshot", () => {
    expect(() => read('{"id":"a"}\t{}')).toThrow(/two parts, not three/);
    expect(() => read('{"id":"a","snapshot":1}\t{}\t{}')).toThrow(/not a record without its snapshot/);
    expect(() => read("[1]\t{}\t{}")).toThrow(/not a record without its snapshot/);
    expect(() => read('{"id":"a"}\t{x\t{}')).toThrow(SyntaxError);
  });

  it("is the record as JSON when its snapshot is small, or it is no record with a snapshot", () => {
    const small = { ...record("c1"), snapshot: { status: "active", value: "waiting", context: { n: 1 } } };
    // Id, time and status first, snapshot last, whatever the record's own order.
    const { id, updatedAt, status, snapshot, ...rest } = small;
    expect(recordLine({ snapshot, ...rest, status, updatedAt, id })).toBe(
      JSON.stringify({ id, updatedAt, status, ...rest, snapshot }),
    );
    expect(recordLine({ id: undefined, snapshot } as unknown as ActorRecord)).toBe(
      JSON.stringify({ snapshot }),
    );
    const r = record("c1");
    const whole = read(JSON.stringify(r));
    expect(Object.getOwnPropertyDescriptor(whole, "snapshot")).toMatchObject({ value: r.snapshot });
    expect(snapshotOutline(whole)).toEqual(r.snapshot);
    expect(read("7")).toBe(7);
    const noSnapshot = { ...r, snapshot: undefined };
    expect(recordLine(noSnapshot)).toBe(JSON.stringify(noSnapshot));
    expect(recordLine(null as unknown as ActorRecord)).toBe("null");
  });

  it("reads back every record as written, whatever its texts hold (tabs, newlines, any character)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string(), (text, id) => {
        const r = { ...record(id, text), meta: { note: `${text}\t${id}` } };
        const line = recordLine(r);
        expect(line.split("\t")).toHaveLength(3);
        expect(line.includes("\n")).toBe(false);
        expect(plainRecord(read(line))).toEqual(r);
      }),
      { numRuns: 300 },
    );
  });
});
