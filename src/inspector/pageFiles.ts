import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_EVENTS } from "./InspectorModel.js";
import type { PageConfig } from "./protocol.js";

/** A file of the inspector page as served. */
export interface PageFile {
  type: string;
  body: string;
}

/**
 * The page's files: in page/ beside this module, both in src/ and in dist/ (the build copies them there:
 * scripts/ship-inspector.mjs).
 */
const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
};

/** The empty data block in index.html that the page reads its settings from. */
const CONFIG_SLOT = '<script type="application/json" id="page-config"></script>';

const config: PageConfig = { maxEvents: MAX_EVENTS };

/**
 * The inspector page by the path it is served at, read once: `/` is index.html with the page's settings
 * put in, and each stylesheet and script is served at `/<name>`.
 */
export function pageFiles(): Promise<ReadonlyMap<string, PageFile>> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined; // a later request tries again
    throw error;
  });
  return loading;
}

let loading: Promise<ReadonlyMap<string, PageFile>> | undefined;

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
