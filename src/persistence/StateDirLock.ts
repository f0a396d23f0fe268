import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, chmod, mkdir, open, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { tryLock, unlock } from "fs-native-extensions";
import { A2AError } from "../errors/A2AError.js";
import { isPlainObject } from "./actorRecord.js";
import { errorCode, errorText, writeAll } from "./DurableJsonFile.js";
import { removeLeftoverTempFiles } from "./stateDirFiles.js";

/** The state directory is held by a live process (possibly this one). */
export class StateDirLockedError extends A2AError {
  override readonly code = "STATE_DIR_LOCKED";
  override readonly name = "StateDirLockedError";

  /** `pid` is undefined when the holder has not written its pid into the lock file yet. */
  constructor(
    readonly dir: string,
    readonly pid: number | undefined,
    readonly lockFile: string,
  ) {
    super(
      `state directory ${dir} is locked by ` +
        (pid === undefined
          ? "a process whose pid is unknown (the lock file does not name it yet)"
          : `process ${pid}`) +
        (pid === process.pid ? " (this process: another runtime in it already holds the directory)" : "") +
        `; stop that runtime or use another state directory (lock file: ${lockFile})`,
    );
  }
}

/** The state directory cannot be created or written. */
export class StateDirNotWritableError extends A2AError {
  override readonly code = "STATE_DIR_NOT_WRITABLE";
  override readonly name = "StateDirNotWritableError";
  /** What the file system said. */
  declare readonly cause: unknown;

  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    super(`state directory ${dir} is not writable: ${errorText(cause)}`, { cause });
  }
}

export interface StateDirLock {
  readonly dir: string;
  readonly lockFile: string;
  /** Empties the lock file (a clean stop), releases the lock and closes it; a second call does nothing. */
  release(): Promise<void>;
}

export interface AcquireStateDirLockOptions {
  /** Told of a stale lock taken over, or a directory mode that cannot be tightened. */
  onWarning?: (message: string) => void;
  now?: () => number;
}

/**
 * Who holds a state directory's `.lock`, as the file says: the holder writes `{ pid, startedAt, token,
 * hostname }` into it, so that a refused start can name it, and empties it at a clean stop.
 */
export type StateDirLockInfo =
  | { kind: "none"; lockFile: string }
  | { kind: "held"; lockFile: string; pid: number; startedAt?: number; alive: boolean }
  | { kind: "unreadable"; lockFile: string; problem: string };

/**
 * Takes an exclusive kernel lock on `dir/.lock` so that only one runtime uses a state directory (two
 * writers on one file lose updates). The lock belongs to the open file (an OFD lock, flock,
 * LockFileEx), so a second runtime in this process is refused too, and the kernel drops it when its
 * holder dies: a reused pid cannot wedge a restart. Creates the directory (mode 0700, tightening an
 * existing one), writes the holder's pid into the lock file and removes killed writers' temp files.
 *
 * @throws StateDirLockedError when another open lock (any process, this one included) holds it.
 * @throws StateDirNotWritableError when the directory or the lock file cannot be created or written.
 */
export async function acquireStateDirLock(
  dir: string,
  options: AcquireStateDirLockOptions = {},
): Promise<StateDirLock> {
  const now = options.now ?? Date.now;
  const warn = options.onWarning ?? (() => {});
  const lockFile = join(dir, ".lock");
  const locks = loadNativeLocks();
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StateDirNotWritableError(dir, error);
  }
  await tightenDirMode(dir, warn);

  // Never unlink `.lock`, not even at release: a process that opened it before the unlink would
  // lock the old, unlinked inode while the next one creates and locks a new file: two holders.
  let fh: FileHandle;
  try {
    fh = await open(lockFile, constants.O_RDWR | constants.O_CREAT, 0o600);
  } catch (error) {
    throw notWritable(dir, error);
  }
  let locked = false;
  try {
    locked = tryLockFile(locks, fh, lockFile);
    if (!locked) throw new StateDirLockedError(dir, await holderPid(fh), lockFile);
    const previous = parseLockText(await readAll(fh), lockFile);
    const mine = { pid: process.pid, startedAt: now(), token: randomUUID(), hostname: hostname() };
    await overwrite(fh, `${JSON.stringify(mine)}\n`);
    if (previous.kind === "held") {
      warn(
        `state directory ${dir}: took over the stale lock of process ${previous.pid}, ` +
          `which ended without releasing it (killed or crashed) (${lockFile})`,
      );
    } else if (previous.kind === "unreadable") {
      warn(`state directory ${dir}: took over an unreadable lock file ${lockFile} (${previous.problem})`);
    }
    await removeLeftoverTempFiles(dir, warn);
  } catch (error) {
    if (locked) locks.unlock(fh.fd);
    await fh.close().catch(() => undefined);
    throw error instanceof StateDirLockedError ? error : notWritable(dir, error);
  }
  return handle(dir, lockFile, fh, locks);
}

/** Whether a process with this pid exists (EPERM: another user's). A reused pid reads as alive: a hint only. */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/**
 * What the lock file says, without locking it: "none" (no file, or emptied at a clean stop), "held"
 * (the last holder, maybe dead since: `alive` is a hint), "unreadable" (a holder killed while writing).
 */
export async function readLockFile(lockFile: string): Promise<StateDirLockInfo> {
  let text: string;
  try {
    text = await readFile(lockFile, "utf8");
  } catch (error) {
    return errorCode(error) === "ENOENT"
      ? { kind: "none", lockFile }
      : { kind: "unreadable", lockFile, problem: errorText(error) };
  }
  return parseLockText(text, lockFile);
}

function parseLockText(text: string, lockFile: string): StateDirLockInfo {
  if (text === "") return { kind: "none", lockFile };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "unreadable", lockFile, problem: "not valid JSON" };
  }
  const { pid, startedAt } = isPlainObject(json) ? json : {};
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0)
    return { kind: "unreadable", lockFile, problem: "it names no pid" };
  const since = typeof startedAt === "number" && startedAt > 0 ? { startedAt } : {};
  return { kind: "held", lockFile, pid, ...since, alive: isProcessAlive(pid) };
}

interface NativeLocks {
  tryLock: typeof tryLock;
  unlock: typeof unlock;
}

let nativeLocks: NativeLocks | undefined;

/** The kernel lock calls, loaded on first use so that reading a state dir (status) never needs them. */
function loadNativeLocks(): NativeLocks {
  if (nativeLocks !== undefined) return nativeLocks;
  try {
    nativeLocks = createRequire(import.meta.url)("fs-native-extensions") as NativeLocks;
  } catch (error) {
    throw new Error(
      `the state-directory lock needs the native module fs-native-extensions, which does not load on ` +
        `${process.platform}-${process.arch}: ${errorText(error)}`,
      { cause: error },
    );
  }
  return nativeLocks;
}

function tryLockFile(locks: NativeLocks, fh: FileHandle, lockFile: string): boolean {
  try {
    return locks.tryLock(fh.fd);
  } catch (error) {
    // ENOLCK, EINVAL: a file system without file locks (some network mounts).
    throw new Error(`could not lock ${lockFile}: ${errorText(error)}`, { cause: error });
  }
}

function handle(dir: string, lockFile: string, fh: FileHandle, locks: NativeLocks): StateDirLock {
  let released: Promise<void> | undefined;
  return {
    dir,
    lockFile,
    release() {
      released ??= (async () => {
        try {
          // Emptied while still held: a file that names a pid at the next start means a holder that
          // did not get here (killed, crashed), which is worth a warning.
          await fh.truncate(0);
        } finally {
          locks.unlock(fh.fd);
          await fh.close();
        }
      })();
      return released;
    },
  };
}

/** The holder's pid, read a few times: a holder that has just locked the file writes it a moment later. */
async function holderPid(fh: FileHandle): Promise<number | undefined> {
  for (let attempt = 0; ; attempt++) {
    const holder = parseLockText(await readAll(fh), "");
    if (holder.kind === "held") return holder.pid;
    if (attempt === 4) return undefined;
    await sleep(5); // node:timers/promises: not the global timers a test may fake
  }
}

/** The lock file's text (a line of JSON: one read). */
async function readAll(fh: FileHandle): Promise<string> {
  const { size } = await fh.stat();
  const { buffer, bytesRead } = await fh.read(Buffer.alloc(size), 0, size, 0);
  return buffer.toString("utf8", 0, bytesRead);
}

/**
 * Writes `text` from offset 0, then cuts the file to its length and fsyncs it. Never truncated
 * first: a kill between the two would leave an empty file, which reads as a clean release.
 */
async function overwrite(fh: FileHandle, text: string): Promise<void> {
  const buffer = Buffer.from(text, "utf8");
  await writeAll(fh, buffer, 0);
  await fh.truncate(buffer.length);
  await fh.sync();
}

async function tightenDirMode(dir: string, warn: (message: string) => void): Promise<void> {
  try {
    if (((await stat(dir)).mode & 0o777) !== 0o700) await chmod(dir, 0o700);
  } catch (error) {
    warn(`state directory ${dir}: could not restrict it to its owner (mode 0700): ${errorText(error)}`);
  }
}

function notWritable(dir: string, error: unknown): Error {
  const code = errorCode(error);
  return code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ENOSPC" || code === "EDQUOT"
    ? new StateDirNotWritableError(dir, error)
    : error instanceof Error
      ? error
      : new Error(errorText(error));
}
