import { readFileSync } from "node:fs";

/**
 * A snapshot from test/fixtures/stored-due/: written by the release whose waits were `context.due`
 * timers (each fixture waits on one), so a machine's tests can check such a snapshot still restores.
 */
export function storedFixture<T>(name: string): T {
  const url = new URL(`../fixtures/stored-due/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as T;
}
