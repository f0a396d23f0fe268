#!/usr/bin/env node
// Part of `npm run build`: puts next to the built inspector what tsc does not emit there. The page's files
// (src/inspector/page: HTML, CSS and browser scripts, served as they are) go to dist/inspector/page; Mermaid's
// browser bundle goes there gzip-compressed, with Mermaid's license: the package ships this file instead of
// depending on mermaid (over 80 MB installed).
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const out = fileURLToPath(new URL("../dist/inspector/", import.meta.url));
mkdirSync(out, { recursive: true });

const page = fileURLToPath(new URL("../src/inspector/page/", import.meta.url));
cpSync(page, join(out, "page"), { recursive: true });
console.log("shipped the inspector page to dist/inspector/page");

const require = createRequire(import.meta.url);
const bundle = require.resolve("mermaid/dist/mermaid.min.js");
const { version } = require("mermaid/package.json");
writeFileSync(join(out, "mermaid.min.js.gz"), gzipSync(readFileSync(bundle), { level: 9 }));
copyFileSync(join(dirname(bundle), "..", "LICENSE"), join(out, "mermaid.LICENSE"));
console.log(`shipped Mermaid ${version} to dist/inspector/mermaid.min.js.gz`);
