#!/usr/bin/env node
// Packs the OpenClaw plugin (packages/openclaw) as `npm publish` would, on a built checkout
// (`npm run build`). Its dependency on the library becomes the library's version. With
// --bundle-library the library's own packed tarball is bundled into the plugin's (npm
// `bundleDependencies`), so `openclaw plugins install npm-pack:<tgz>` works from that one file on a
// machine whose registry does not have a2a-statecharts (an unpublished version, or the tests here).
//
//   node scripts/pack-openclaw-plugin.mjs --out DIR [--bundle-library]     prints the tarball's path
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PLUGIN = join(ROOT, "packages", "openclaw");
const run = promisify(execFile);
const npm = (args, cwd) => run("npm", [...args, "--loglevel=error"], { cwd, maxBuffer: 64 * 1024 * 1024 });

/** Packs the plugin into `out`; returns the tarball's path. */
export async function packOpenClawPlugin({ out, bundleLibrary = false }) {
  mkdirSync(out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "a2a-pack-plugin-"));
  try {
    const library = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const manifest = JSON.parse(readFileSync(join(PLUGIN, "package.json"), "utf8"));
    manifest.dependencies["a2a-statecharts"] = library.version;
    delete manifest.scripts;

    const stage = join(work, "package");
    mkdirSync(stage);
    for (const file of manifest.files) cpSync(join(PLUGIN, file), join(stage, file), { recursive: true });
    cpSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));

    if (bundleLibrary) {
      // The library as its own tarball holds it (no workspace link), with its runtime dependencies.
      await npm(["pack", "--ignore-scripts", "--pack-destination", work], ROOT);
      const libraryTarball = readdirSync(work).find(
        (name) => name.startsWith("a2a-statecharts-") && name.endsWith(".tgz"),
      );
      if (libraryTarball === undefined) throw new Error("npm pack of the library wrote no tarball");
      writeFileSync(join(stage, "package.json"), JSON.stringify({ name: "stage", private: true }));
      await npm(
        [
          "install",
          "--omit=dev",
          "--omit=peer",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          "--no-package-lock",
          join(work, libraryTarball),
        ],
        stage,
      );
      manifest.dependencies["a2a-statecharts"] = library.version;
      manifest.bundleDependencies = ["a2a-statecharts"];
    }
    writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    const { stdout } = await npm(["pack", "--ignore-scripts", "--pack-destination", resolve(out)], stage);
    const name = stdout.trim().split("\n").pop();
    if (!name?.endsWith(".tgz")) throw new Error(`npm pack printed no tarball name: ${stdout}`);
    return join(resolve(out), name);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { out: { type: "string", default: "." }, "bundle-library": { type: "boolean" } },
  });
  console.log(
    await packOpenClawPlugin({ out: values.out, bundleLibrary: values["bundle-library"] === true }),
  );
}
