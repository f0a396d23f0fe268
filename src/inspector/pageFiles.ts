import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { MAX_EVENTS } from "./InspectorModel.js";
import type { PageConfig } from "./protocol.js";

/** A file of the inspector page as served; `gzipped` when `body` is gzip-compressed. */
export interface PageFile {
  type: string;
  body: string | Buffer;
  gzipped?: boolean;
}

/** page/ beside this module, in src/ and in dist/ (the build copies it: scripts/ship-inspector.mjs). */
const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
};

/** The empty data block in index.html that the page reads its settings from. */
const CONFIG_SLOT = '<script type="application/json" id="page-config"></script>';

const config: PageConfig = { maxEvents: MAX_EVENTS };

/** Loads once; a failed load is tried again at the next call. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

/** The file at `path`: `/` is index.html with the settings in, `/<name>` a page/ file, or `/mermaid.js`. */
export async function pageFile(path: string): Promise<PageFile | undefined> {
  if (path === "/mermaid.js")
    return { type: TYPES[".js"] as string, body: await mermaidBundle(), gzipped: true };
  return (await pageFiles()).get(path);
}

const pageFiles = once(load);

async function load(): Promise<ReadonlyMap<string, PageFile>> {
  let names: string[];
  try {
    names = await readdir(PAGE_DIR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new Error(
      `the inspector page is missing: no ${PAGE_DIR} (reinstall a2a-statecharts, or run \`npm run build\` in a checkout)`,
      { cause: error },
    );
  }
  const files = new Map<string, PageFile>();
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = await readFile(join(PAGE_DIR, name), "utf8");
    if (name === "index.html") files.set("/", { type, body: withConfig(body) });
    else if (type !== TYPES[".html"]) files.set(`/${name}`, { type, body });
  }
  if (!files.has("/")) throw new Error(`the inspector page is missing: no index.html in ${PAGE_DIR}`);
  return files;
}

/** index.html with the settings in its data block; `<` escaped so no text in them can end the block. */
function withConfig(html: string): string {
  if (!html.includes(CONFIG_SLOT)) throw new Error(`the inspector's index.html has no ${CONFIG_SLOT}`);
  const json = JSON.stringify(config).replaceAll("<", "\\u003c");
  return html.replace(CONFIG_SLOT, () => CONFIG_SLOT.replace("></", `>${json}</`));
}

/** The file the build puts next to the built inspector: Mermaid's browser bundle, gzip-compressed. */
const SHIPPED_MERMAID_BUNDLE = "mermaid.min.js.gz";

/**
 * Mermaid's browser bundle, gzip-compressed: shipped rather than depended on (the npm package is over
 * 80 MB, the bundle under 1 MB); in a source checkout, the mermaid dev dependency's, compressed on first use.
 */
const mermaidBundle = once(async (): Promise<Buffer> => {
  try {
    return await readFile(fileURLToPath(new URL(`./${SHIPPED_MERMAID_BUNDLE}`, import.meta.url)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  let source: string;
  try {
    source = createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js");
  } catch {
    throw new Error(
      `the inspector's Mermaid bundle is missing: neither ${SHIPPED_MERMAID_BUNDLE} next to the inspector ` +
        "nor the mermaid package is there (reinstall a2a-statecharts, or run `npm run build` in a checkout)",
    );
  }
  return promisify(gzip)(await readFile(source));
});
