import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { parseConfig } from "../../src/index.js";

// A config a reader copies from the README must load as it is written.
it("every JSON block of the README is a config parseConfig accepts", () => {
  const readme = readFileSync(join(resolve(import.meta.dirname, "../.."), "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  expect(blocks.length).toBeGreaterThan(0);
  for (const block of blocks) expect(() => parseConfig(JSON.parse(block))).not.toThrow();
});
