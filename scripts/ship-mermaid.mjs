#!/usr/bin/env node
// Part of `npm run build`: puts Mermaid's browser bundle, gzip-compressed, next to the built inspector,
// with Mermaid's license. The package ships this file instead of depending on mermaid (over 80 MB installed).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const require = createRequire(import.meta.url);
const bundle = require.resolve("mermaid/dist/mermaid.min.js");
const { version } = require("mermaid/package.json");
const out = fileURLToPath(new URL("../dist/inspector/", import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "mermaid.min.js.gz"), gzipSync(readFileSync(bundle), { level: 9 }));
copyFileSync(join(dirname(bundle), "..", "LICENSE"), join(out, "mermaid.LICENSE"));
console.log(`shipped Mermaid ${version} to dist/inspector/mermaid.min.js.gz`);
