import { existsSync, readdirSync, readlinkSync } from "node:fs";

/** Whether openFilesUnder can see this process's descriptors (Linux /proc). */
export const CAN_LIST_OPEN_FILES = existsSync("/proc/self/fd");

/** The files under `dir` this process holds open (Linux: from /proc/self/fd), to check a handle was closed. */
export function openFilesUnder(dir: string): string[] {
  const open: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`)) open.push(target);
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return open;
}
