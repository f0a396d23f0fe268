import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { chmod, mkdir, open, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  StateDirLockedError,
  StateDirNotWritableError,
  acquireStateDirLock,
  isProcessAlive,
  readLockFile,
  removeLeftoverTempFiles,
} from "../../src/persistence/index.js";
import { canWriteIn, tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const native = createRequire(import.meta.url)("fs-native-extensions") as { tryLock(fd: number): boolean };

/** The pid of a process that has exited: spawn one that does nothing and wait for its exit event. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid;
  if (pid === undefined) throw new Error("spawn gave no pid");
  await new Promise<void>((resolve, reject) => {
    child.once("exit", () => resolve());
    child.once("error", reject);
  });
  return pid;
}

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe("acquireStateDirLock", () => {
  it("creates the directory (0700) and a lock file (0600) naming this process", async () => {
    const dir = join(await dirs.make(), "nested", "state");
    const lock = await acquireStateDirLock(dir, { now: () => 1234 });
    const content: unknown = JSON.parse(await readFile(join(dir, ".lock"), "utf8"));
    expect(content).toMatchObject({ pid: process.pid, startedAt: 1234, hostname: hostname() });
    expect(lock.lockFile).toBe(join(dir, ".lock"));
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(join(dir, ".lock"))).toBe(0o600);
    await lock.release();
  });

  it("tightens an existing directory to 0700", async () => {
    const dir = await dirs.make();
    await chmod(dir, 0o755);
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(await mode(dir)).toBe(0o700);
    expect(warnings).toEqual([]);
    await lock.release();
  });

  it("refuses a second lock in the same process, naming the directory and the pid", async () => {
    const dir = await dirs.make();
    const lock = await acquireStateDirLock(dir);
    const error = await acquireStateDirLock(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateDirLockedError);
    expect(error).toMatchObject({ dir, pid: process.pid, lockFile: join(dir, ".lock") });
    expect((error as Error).message).toBe(
      `state directory ${dir} is locked by process ${process.pid} (this process: another runtime in it ` +
        `already holds the directory); stop that runtime or use another state directory (lock file: ${join(dir, ".lock")})`,
    );
    await lock.release();
  });

  it("refused while the holder has not named itself yet: the pid is unknown", async () => {
    const dir = await dirs.make();
    const fh = await open(join(dir, ".lock"), constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      expect(native.tryLock(fh.fd)).toBe(true); // locked, nothing written
      const error = await acquireStateDirLock(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateDirLockedError);
      expect(error).toMatchObject({ pid: undefined });
      expect((error as Error).message).toContain(
        `state directory ${dir} is locked by a process whose pid is unknown (the lock file does not name it yet)`,
      );
    } finally {
      await fh.close();
    }
  });

  it("two acquires at once in one process (fake timers): one holds, the other is refused", async () => {
    const dir = await dirs.make();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    try {
      const results = await Promise.allSettled([acquireStateDirLock(dir), acquireStateDirLock(dir)]);
      const held = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
      expect(held).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(StateDirLockedError);
      for (const lock of held) await lock.release();
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ["pid 1 (the PID a container's gateway has again after a restart)", 1],
    ["this process's own pid", process.pid],
  ])("PID reuse: a lock file naming a live %s, with no lock held, is taken over", async (_, pid) => {
    expect(isProcessAlive(pid)).toBe(true);
    const dir = await dirs.make();
    await writeFile(join(dir, ".lock"), JSON.stringify({ pid, startedAt: 1, token: "old" }));
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      `state directory ${dir}: took over the stale lock of process ${pid}, which ended without releasing it ` +
        `(killed or crashed) (${join(dir, ".lock")})`,
    ]);
    expect(JSON.parse(await readFile(join(dir, ".lock"), "utf8"))).toMatchObject({ pid: process.pid });
    await expect(acquireStateDirLock(dir)).rejects.toBeInstanceOf(StateDirLockedError);
    await lock.release();
  });

  it("takes over the lock file of a dead process, naming its pid; a longer old content is cut", async () => {
    const dir = await dirs.make();
    const pid = await deadPid();
    await writeFile(join(dir, ".lock"), JSON.stringify({ pid, startedAt: 1, token: "old".repeat(100) }));
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`took over the stale lock of process ${pid},`);
    expect(JSON.parse(await readFile(join(dir, ".lock"), "utf8"))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it("takes over an unreadable lock file with a warning", async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, ".lock"), "{ half a lock");
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      `state directory ${dir}: took over an unreadable lock file ${join(dir, ".lock")} (not valid JSON)`,
    ]);
    await lock.release();
  });

  it("release empties the lock file and keeps it; the next holder is not warned; releasing twice is harmless", async () => {
    const dir = await dirs.make();
    const first = await acquireStateDirLock(dir);
    await Promise.all([first.release(), first.release()]);
    await first.release();
    // Never unlinked: a process that opened the old file would lock an inode nobody else sees.
    expect(await readFile(join(dir, ".lock"), "utf8")).toBe("");
    expect(await readLockFile(join(dir, ".lock"))).toEqual({ kind: "none", lockFile: join(dir, ".lock") });
    const warnings: string[] = [];
    const second = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    expect(await readLockFile(join(dir, ".lock"))).toMatchObject({
      kind: "held",
      pid: process.pid,
      alive: true,
    });
    await second.release();
  });

  it("fails with a clear error naming a directory it cannot write", async (ctx) => {
    const parent = await dirs.make();
    const dir = join(parent, "state");
    await mkdir(dir);
    await chmod(dir, 0o500);
    try {
      if (await canWriteIn(dir)) ctx.skip(); // root ignores the mode
      const error = await acquireStateDirLock(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateDirNotWritableError);
      expect((error as Error).message).toContain(`state directory ${dir} is not writable`);
      const nested = await acquireStateDirLock(join(dir, "inner")).catch((e: unknown) => e);
      expect(nested).toBeInstanceOf(StateDirNotWritableError);
    } finally {
      await chmod(dir, 0o700);
    }
  });

  it("removes every leftover temp file in the directory and its subfolders, and nothing else", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors"));
    await mkdir(join(dir, "archive", "deep"), { recursive: true });
    const leftovers = [
      `.lock.tmp-${process.pid}`, // a live pid too: with the lock held, no writer is alive in here
      "a2a-conversation-index.json.tmp-77",
      join("actors", "shard-03.ndjson.tmp-123"),
      join("archive", "deep", "archive-2026-01-01T09.ndjson.tmp-x"),
    ];
    const kept = [
      "a2a-conversation-index.json",
      join("actors", "shard-03.ndjson"),
      join("actors", "journal-1.ndjson"),
      "tmp-notes",
    ];
    for (const name of [...leftovers, ...kept]) await writeFile(join(dir, name), "{}");
    const lock = await acquireStateDirLock(dir);
    const names = await readdir(dir, { recursive: true });
    for (const name of leftovers) expect(names).not.toContain(name);
    for (const name of kept) expect(names).toContain(name);
    await lock.release();
  });
});

describe("removeLeftoverTempFiles", () => {
  it("returns what it removed; a missing directory is nothing to do", async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, "a.json.tmp-1"), "");
    expect(await removeLeftoverTempFiles(dir)).toEqual([join(dir, "a.json.tmp-1")]);
    expect(await removeLeftoverTempFiles(join(dir, "none"))).toEqual([]);
  });
});

describe("acquireStateDirLock without its native module", () => {
  it("fails naming the platform and the cause, and touches nothing", async () => {
    const Module = createRequire(import.meta.url)("node:module") as {
      _load: (request: string, ...rest: unknown[]) => unknown;
    };
    const load = Module._load;
    Module._load = function (this: unknown, request: string, ...rest: unknown[]) {
      if (request === "fs-native-extensions") throw new Error("No native build was found for this platform");
      return load.call(this, request, ...rest);
    };
    try {
      vi.resetModules(); // a fresh StateDirLock: nothing loaded yet
      const fresh = await import("../../src/persistence/StateDirLock.js");
      const dir = join(await dirs.make(), "state");
      await expect(fresh.acquireStateDirLock(dir)).rejects.toThrow(
        `the state-directory lock needs the native module fs-native-extensions, which does not load on ` +
          `${process.platform}-${process.arch}: No native build was found for this platform`,
      );
      await expect(stat(dir)).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      Module._load = load;
    }
  });
});
