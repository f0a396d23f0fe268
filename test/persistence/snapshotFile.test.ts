// A store file kept open for the snapshots of the records read from it.
import { renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { StateFileReadError } from "../../src/persistence/DurableJsonFile.js";
import { FileReader } from "../../src/persistence/FileReader.js";
import { SnapshotFile, SnapshotFiles } from "../../src/persistence/SnapshotFile.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

it("reads a span of the file as it was opened, after the path names another file", async () => {
  const path = join(await dirs.make(), "shard-00.ndjson");
  writeFileSync(path, 'head\t{}\t{"value":"waiting"}\n');
  const { bytes, file } = SnapshotFile.open(path, new FileReader());
  const start = bytes.indexOf('{"value"');
  const span = file.span(start, bytes.length - 1 - start);
  writeFileSync(`${path}.tmp`, "something else entirely, longer than the first file was\n");
  renameSync(`${path}.tmp`, path);
  expect(file.read(span).toString()).toBe('{"value":"waiting"}');
  expect(file.holdsSnapshots).toBe(true);
  file.close();
  expect(() => file.read(span)).toThrow(StateFileReadError);
});

it("a file cut short under it: the read names the file and where it ends", async () => {
  const path = join(await dirs.make(), "journal-000001.ndjson");
  writeFileSync(path, "x".repeat(100));
  const { file } = SnapshotFile.open(path, new FileReader());
  truncateSync(path, 10);
  expect(() => file.read(file.span(50, 20))).toThrow(
    expect.objectContaining({
      code: "STATE_FILE_UNREADABLE",
      file: path,
      message: expect.stringMatching(/ends before byte 70/),
    }),
  );
  file.close();
  file.close(); // twice: nothing
});

it("a file that does not exist: the fs error, and nothing left open", async () => {
  const path = join(await dirs.make(), "missing.ndjson");
  expect(() => SnapshotFile.open(path, new FileReader())).toThrow(
    expect.objectContaining({ code: "ENOENT" }),
  );
});

it("keeps a file open only while a record keeps its snapshot there, and at most `max` of them", async () => {
  const dir = await dirs.make();
  const paths = ["a", "b", "c"].map((name) => join(dir, name));
  for (const path of paths) writeFileSync(path, `bytes of ${path}`);
  const files = new SnapshotFiles(1);
  const reader = new FileReader();

  const a = files.read(paths[0] as string, reader);
  expect(a.bytes.toString()).toBe(`bytes of ${paths[0]}`);
  files.keep(a.file as SnapshotFile); // no span made from it: closed
  expect(() => a.file?.read({ file: a.file, offset: 0, length: 1 })).toThrow(/its store is closed/);

  const b = files.read(paths[1] as string, reader);
  const span = b.file?.span(0, 5);
  files.keep(b.file as SnapshotFile);
  expect(b.file?.holdsSnapshots).toBe(true);
  // One kept is the most: the next file is read, not kept.
  const c = files.read(paths[2] as string, reader);
  expect(c.file).toBeUndefined();
  expect(c.bytes.toString()).toBe(`bytes of ${paths[2]}`);
  expect(span && b.file?.read(span).toString()).toBe("bytes");

  files.close();
  expect(() => span && b.file?.read(span)).toThrow(StateFileReadError);
});
