// The part of fs-native-extensions (CommonJS, ships no types) that StateDirLock uses.
declare module "fs-native-extensions" {
  /**
   * Takes a lock on `length` bytes of the open file `fd` from `offset` (0 and 0: the whole file),
   * exclusive unless `shared`. Linux: an OFD lock (fcntl F_OFD_SETLK); macOS: flock; Windows:
   * LockFileEx. Returns false when another open file description holds a conflicting lock.
   */
  export function tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
  /** Releases the lock tryLock took on the same range. */
  export function unlock(fd: number, offset?: number, length?: number): void;
}
