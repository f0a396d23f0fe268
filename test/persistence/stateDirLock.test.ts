import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  StateDirLockedError,
  StateDirNotWritableError,
  acquireStateDirLock,
  isProcessAlive,
} from "../../src/persistence/index.js";
import { canWriteIn, tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

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

describe("acquireStateDirLock", () => {
  it("creates the directory and a lock file naming this process", async () => {
    const dir = join(await dirs.make(), "nested", "state");
    const lock = await acquireStateDirLock(dir, { now: () => 1234 });
    const content: unknown = JSON.parse(await readFile(join(dir, ".lock"), "utf8"));
    expect(content).toMatchObject({ pid: process.pid, startedAt: 1234 });
    expect(lock.lockFile).toBe(join(dir, ".lock"));
    await lock.release();
  });

  it("refuses a second lock in the same process, naming the directory and the pid", async () => {
    const dir = await dirs.make();
    const lock = await acquireStateDirLock(dir);
    const error = await acquireStateDirLock(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateDirLockedError);
    expect(error).toMatchObject({ dir, pid: process.pid });
    expect((error as Error).message).toContain(dir);
    expect((error as Error).message).toContain(String(process.pid));
    await lock.release();
  });

  it("refuses a directory held by another live process", async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, ".lock"), JSON.stringify({ pid: process.ppid, startedAt: 1, token: "theirs" }));
    await expect(acquireStateDirLock(dir)).rejects.toThrow(
      `state directory ${dir} is locked by process ${process.ppid}`,
    );
  });

  it("takes over the lock of a dead process with a warning naming its pid", async () => {
    const dir = await dirs.make();
    const pid = await deadPid();
    expect(isProcessAlive(pid)).toBe(false);
    await writeFile(join(dir, ".lock"), JSON.stringify({ pid, startedAt: 1, token: "old" }));
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`stale lock of process ${pid}`);
    expect(warnings[0]).toContain(dir);
    expect(JSON.parse(await readFile(join(dir, ".lock"), "utf8"))).toMatchObject({ pid: process.pid });
    await expect(acquireStateDirLock(dir)).rejects.toBeInstanceOf(StateDirLockedError);
    await lock.release();
  });

  it("takes over an unreadable lock file with a warning", async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, ".lock"), "");
    const warnings: string[] = [];
    const lock = await acquireStateDirLock(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      `state directory ${dir}: took over an unreadable lock file ${join(dir, ".lock")}`,
    ]);
    await lock.release();
  });

  it("can be acquired again after release; releasing twice is harmless", async () => {
    const dir = await dirs.make();
    const first = await acquireStateDirLock(dir);
    await first.release();
    await first.release();
    await expect(stat(join(dir, ".lock"))).rejects.toMatchObject({ code: "ENOENT" });
    const second = await acquireStateDirLock(dir);
    await second.release();
  });

  it("does not delete a lock that another holder has taken over since", async () => {
    const dir = await dirs.make();
    const lock = await acquireStateDirLock(dir);
    const theirs = JSON.stringify({ pid: process.ppid, startedAt: 2, token: "theirs" });
    await writeFile(join(dir, ".lock"), theirs);
    await lock.release();
    expect(await readFile(join(dir, ".lock"), "utf8")).toBe(theirs);
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

  it("removes the temp file a killed takeover left behind, and only a dead process's", async () => {
    const dir = await dirs.make();
    const dead = await deadPid();
    await writeFile(join(dir, `.lock.tmp-${dead}`), "{}");
    await writeFile(join(dir, `.lock.tmp-${process.pid}`), "{}");
    const lock = await acquireStateDirLock(dir);
    const { readdir } = await import("node:fs/promises");
    const names = await readdir(dir);
    expect(names).not.toContain(`.lock.tmp-${dead}`);
    expect(names).toContain(`.lock.tmp-${process.pid}`);
    await lock.release();
  });
});
