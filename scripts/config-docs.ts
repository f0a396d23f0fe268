// Writes docs/config.md from A2AConfigSchema: `npx tsx scripts/config-docs.ts`.
// `npx tsx scripts/config-docs.ts --check` writes nothing and exits 1 when the page is stale or missing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { renderConfigDocs } from "./configDocs.js";

const CONFIG_DOCS_FILE = "docs/config.md";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const path = join(root, CONFIG_DOCS_FILE);
const check = process.argv.slice(2).includes("--check");
const content = renderConfigDocs();
const existing = existsSync(path) ? readFileSync(path, "utf8") : undefined;

if (check) {
  if (existing !== content) {
    const problem = existing === undefined ? "missing" : "stale";
    console.error(`${CONFIG_DOCS_FILE} is ${problem}; run \`npx tsx scripts/config-docs.ts\``);
    process.exit(1);
  }
  console.log(`${CONFIG_DOCS_FILE} is up to date.`);
} else if (existing === content) {
  console.log(`unchanged ${CONFIG_DOCS_FILE}`);
} else {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  console.log(`${existing === undefined ? "created" : "updated"} ${CONFIG_DOCS_FILE}`);
}
