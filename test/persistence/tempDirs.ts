import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Real temporary directories, removed after each test (call `cleanup` from afterEach). */
export function tempDirs(): { make(): Promise<string>; cleanup(): Promise<void> } {
  const made: string[] = [];
  return {
    async make() {
      const dir = await mkdtemp(join(tmpdir(), "a2a-persistence-"));
      made.push(dir);
      return dir;
    },
    async cleanup() {
      for (const dir of made.splice(0)) {
        await chmod(dir, 0o700).catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Whether this process can create a file in `dir` (root ignores a chmod 0o500). */
export async function canWriteIn(dir: string): Promise<boolean> {
  const probe = join(dir, ".write-probe");
  try {
    await writeFile(probe, "");
    await rm(probe, { force: true });
    return true;
  } catch {
    return false;
  }
}
