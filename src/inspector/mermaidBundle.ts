import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { gzip } from "node:zlib";
import { promisify } from "node:util";

/** The file the build puts next to the built inspector: Mermaid's browser bundle, gzip-compressed. */
export const SHIPPED_MERMAID_BUNDLE = "mermaid.min.js.gz";

/**
 * Mermaid's single-file browser bundle (it defines `window.mermaid`), gzip-compressed, read once.
 *
 * The package ships it instead of depending on mermaid: the npm package with its dependencies is over
 * 80 MB, the compressed bundle under 1 MB. A source checkout has no shipped copy; there the bundle
 * comes from the mermaid dev dependency, compressed on first use.
 */
export function mermaidBundle(): Promise<Buffer> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined; // a later page load tries again
    throw error;
  });
  return loading;
}

let loading: Promise<Buffer> | undefined;

async function load(): Promise<Buffer> {
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
}
