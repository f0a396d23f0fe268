import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, errorText, syncDirectory } from "./DurableJsonFile.js";

/** The state directory is held by a live process (possibly this one). */
export class StateDirLockedError extends Error {
  override readonly name = "StateDirLockedError";

  constructor(
    readonly dir: string,
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(
      `state directory ${dir} is locked by process ${pid}` +
        (pid === process.pid ? " (this process: another runtime in it already holds the directory)" : "") +
        `; stop that runtime or use another state directory (lock file: ${lockFile})`,
    );
  }
}

/** The state directory cannot be created or written. */
export class StateDirNotWritableError extends Error {
  override readonly name = "StateDirNotWritableError";

  constructor(
    readonly dir: string,
    override readonly cause: unknown,
  ) {
    super(`state directory ${dir} is not writable: ${errorText(cause)}`);
  }
}

export interface StateDirLock {
  readonly dir: string;
  readonly lockFile: string;
  /** Deletes the lock file if it is still ours; a second call does nothing. */
  release(): Promise<void>;
}

export interface AcquireStateDirLockOptions {
  /** Told when a stale lock (dead holder, unreadable file) is taken over. */
  onWarning?: (message: string) => void;
  now?: () => number;
}

export interface LockContent {
  pid: number;
  startedAt: number;
  token: string;
}

/**
 * Takes `dir/.lock` so that only one runtime uses a state directory: lowdb has no inter-process
 * locking, and two writers on one file lose updates. The lock names its holder's pid; a holder
 * that is alive (this process included) keeps the directory, a dead one's lock is taken over.
 */
export async function acquireStateDirLock(
  dir: string,
  options: AcquireStateDirLockOptions = {},
): Promise<StateDirLock> {
  const now = options.now ?? Date.now;
  const lockFile = join(dir, ".lock");
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new StateDirNotWritableError(dir, error);
  }
  const mine: LockContent = { pid: process.pid, startedAt: now(), token: randomUUID() };
  const text = JSON.stringify(mine);
  await removeDeadTakeoverFiles(dir);

  let holder: LockRead = { kind: "missing" };
  // A lock released between our attempt and our read is gone: try again (a few times, not forever).
  for (let attempt = 0; attempt < 3 && holder.kind === "missing"; attempt++) {
    try {
      await writeSynced(lockFile, text, "wx");
      return handle(dir, lockFile, mine.token);
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw notWritable(dir, error);
    }
    holder = await readLockFile(lockFile);
  }
  if (holder.kind === "held" && isProcessAlive(holder.content.pid)) {
    throw new StateDirLockedError(dir, holder.content.pid, lockFile);
  }

  // Stale: replace atomically (temp + rename), then read back. Two runtimes taking over the same
  // stale lock at the same instant is still a race (the later rename wins and the read-back of the
  // earlier one may already have passed); the window is a few system calls at start-up.
  const tmp = `${lockFile}.tmp-${process.pid}`;
  try {
    await writeSynced(tmp, text, "w");
    await rename(tmp, lockFile);
    await syncDirectory(dir);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw notWritable(dir, error);
  }
  const after = await readLockFile(lockFile);
  if (after.kind !== "held" || after.content.token !== mine.token) {
    throw new StateDirLockedError(dir, after.kind === "held" ? after.content.pid : -1, lockFile);
  }
  options.onWarning?.(
    holder.kind === "held"
      ? `state directory ${dir}: took over the stale lock of process ${holder.content.pid}, which is no longer running (${lockFile})`
      : `state directory ${dir}: took over an unreadable lock file ${lockFile}`,
  );
  return handle(dir, lockFile, mine.token);
}

/**
 * Whether a process with this pid exists. `kill(pid, 0)` sends nothing: it succeeds for a live
 * process, fails with EPERM for a live one owned by another user, and with ESRCH for none.
 * A reused pid reads as alive; the lock error names the pid and file so an operator can check.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

function handle(dir: string, lockFile: string, token: string): StateDirLock {
  let released = false;
  return {
    dir,
    lockFile,
    async release() {
      if (released) return;
      released = true;
      const current = await readLockFile(lockFile);
      // Never delete a lock someone else has taken over since.
      if (current.kind === "held" && current.content.token === token) await rm(lockFile, { force: true });
    },
  };
}

export type LockRead =
  { kind: "missing" } | { kind: "unreadable"; problem: string } | { kind: "held"; content: LockContent };

/**
 * The lock file's content. "unreadable" covers an empty or garbled file: a holder that died
 * between creating and writing it (or, for a few microseconds, one that is writing it now).
 */
export async function readLockFile(lockFile: string): Promise<LockRead> {
  let text: string;
  try {
    text = await readFile(lockFile, "utf8");
  } catch (error) {
    return errorCode(error) === "ENOENT"
      ? { kind: "missing" }
      : { kind: "unreadable", problem: error instanceof Error ? error.message : String(error) };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "unreadable", problem: text === "" ? "the file is empty" : "not valid JSON" };
  }
  if (typeof json !== "object" || json === null) return { kind: "unreadable", problem: "it names no pid" };
  const { pid, startedAt, token } = json as Record<string, unknown>;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) {
    return { kind: "unreadable", problem: "it names no pid" };
  }
  return {
    kind: "held",
    content: {
      pid,
      startedAt: typeof startedAt === "number" ? startedAt : 0,
      token: typeof token === "string" ? token : "",
    },
  };
}

async function writeSynced(file: string, text: string, flag: "w" | "wx"): Promise<void> {
  const fh = await open(file, flag);
  try {
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function notWritable(dir: string, error: unknown): Error {
  const code = errorCode(error);
  return code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ENOSPC"
    ? new StateDirNotWritableError(dir, error)
    : error instanceof Error
      ? error
      : new Error(errorText(error));
}

/** A takeover killed between writing its temp file and renaming it leaves `.lock.tmp-<pid>`: remove those of dead pids. */
async function removeDeadTakeoverFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = /^\.lock\.tmp-(\d+)$/.exec(name)?.[1];
    if (pid !== undefined && !isProcessAlive(Number(pid)))
      await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}
