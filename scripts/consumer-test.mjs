#!/usr/bin/env node
// The package as a production gateway installs it. On a built checkout (`npm run build`):
//  1. `npm pack`s it and checks what the tarball holds;
//  2. for each peer set (default: the oldest xstate, discord.js and pg we claim, and the newest npm
//     resolves today), installs the tarball into a fresh project exactly as a user would
//     (`npm i <tarball> xstate@X discord.js@Y`), and fails if that install is over 50 MB or 60 packages;
//     then adds pg@Z (the optional peer of ./postgres) and prints what it adds;
//  3. type-checks a gateway's code (scripts/consumer/*.ts) with `tsc --strict` in an ES module project
//     and a CommonJS one, both `module: nodenext`, against the consumer's own xstate and discord.js;
//  4. runs the same code with plain node in both module systems: one mention answered against the
//     emulator, the inspector serving its shipped Mermaid bundle, the mention machine alone;
//  5. times a cold import/require of the root and checks it loads no server code and warns nothing;
//  6. installs it with xstate alone (discord.js is optional): the root answers a mention through the
//     gateway's own DiscordPort, and ./discord and the CLI's demo name discord.js as missing.
// It prints a table and exits non-zero naming every failure.
//
//   node scripts/consumer-test.mjs [--peers xstate@5.20.0,discord.js@14.19.0,pg@8.11.0]… [--keep] [--outside-ranges]
//
// --keep leaves the temp projects in place (the path is printed). --outside-ranges installs with
// --legacy-peer-deps, so versions outside the package's peerDependencies ranges can be tried (to find
// how far the ranges can be widened).
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

/** The oldest versions the package claims (its peerDependencies ranges start here), and the newest. */
const PEER_SETS = {
  oldest: { xstate: "5.20.0", "discord.js": "14.19.0", pg: "8.11.0" },
  newest: { xstate: "5", "discord.js": "14", pg: "8" },
};
const LIMITS = { megabytes: 50, packages: 60, rootNames: 25 };
const ENTRY_POINTS = ["", "/policies", "/discord", "/testing", "/inspector", "/durable", "/postgres"];

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIXTURES = join(ROOT, "scripts", "consumer");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error"];

const failures = [];
const fail = (what) => {
  failures.push(what);
  console.error(`FAIL ${what}`);
};

/** Runs a command to its end; never rejects. `ok` is exit code 0 within the time limit. */
function run(command, args, { cwd, timeoutMs = 120_000 } = {}) {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: "" } },
      (error, stdout, stderr) => {
        const timedOut = error?.killed === true;
        resolve({
          ok: error === null,
          why: timedOut ? `did not end within ${timeoutMs / 1000} s` : `exit code ${error?.code ?? 0}`,
          stdout,
          stderr,
          seconds: (performance.now() - started) / 1000,
        });
      },
    );
  });
}

const indent = (text, lines = 25) =>
  text
    .trim()
    .split("\n")
    .slice(0, lines)
    .map((line) => `    ${line}`)
    .join("\n");

function parsePeerSet(spec) {
  const set = {};
  for (const part of spec.split(",")) {
    const at = part.lastIndexOf("@");
    const name = part.slice(0, at);
    if (at <= 0 || !(name in PEER_SETS.oldest))
      throw new Error(`--peers: "${part}" is not xstate@<version>, discord.js@<version> or pg@<version>`);
    set[name] = part.slice(at + 1);
  }
  for (const name of Object.keys(PEER_SETS.oldest))
    if (set[name] === undefined) throw new Error(`--peers ${spec}: ${name}@<version> is missing`);
  return set;
}

/** Packs the checkout without rebuilding it, and checks the tarball's contents. */
async function pack(dir) {
  if (!existsSync(join(ROOT, "dist", "index.js")))
    throw new Error("no dist/index.js: run `npm run build` before the consumer test");
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], {
    cwd: ROOT,
  });
  if (!packed.ok) throw new Error(`npm pack failed (${packed.why}):\n${indent(packed.stderr)}`);
  const [info] = JSON.parse(packed.stdout);
  const files = info.files.map((file) => file.path);
  console.log(
    `packed ${info.filename}: ${kib(info.size)} KiB compressed, ${kib(info.unpackedSize)} KiB unpacked, ` +
      `${info.entryCount} files`,
  );
  const tests = files.filter((file) =>
    /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]s$/.test(file),
  );
  if (tests.length > 0) fail(`the tarball ships tests: ${tests.slice(0, 5).join(", ")}`);
  for (const needed of ["dist/index.js", "dist/index.d.ts", "dist/inspector/mermaid.min.js.gz", "LICENSE"])
    if (!files.includes(needed)) fail(`the tarball lacks ${needed}`);
  if (!files.some((file) => file.startsWith("src/")))
    fail("the tarball lacks src/ (the source maps point into it)");
  return join(dir, info.filename);
}

const kib = (bytes) => Math.round(bytes / 1024);

/** `du -sk`: the disk space node_modules takes, in MB (1 MB = 1024 KiB, as du -h counts). */
async function diskMegabytes(dir) {
  const du = await run("du", ["-sk", dir]);
  if (!du.ok) throw new Error(`du -sk ${dir} failed: ${du.stderr.trim()}`);
  return Number.parseInt(du.stdout, 10) / 1024;
}

/** Packages in the install, from npm's hidden lockfile (one entry per installed package directory). */
function packageCount(project) {
  const lock = JSON.parse(readFileSync(join(project, "node_modules", ".package-lock.json"), "utf8"));
  return Object.keys(lock.packages).filter((path) => path !== "").length;
}

const versionIn = (project, name) =>
  JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")).version;

/** What a user opens from the installed package: source maps that resolve, doc comments that cite no internal document. */
function checkShipped(project) {
  const pkg = join(project, "node_modules", "a2a-statecharts");
  let maps = 0;
  const unresolved = [];
  const citing = [];
  for (const file of readdirSync(join(pkg, "dist"), { recursive: true })) {
    const path = join(pkg, "dist", file);
    if (file.endsWith(".map")) {
      maps += 1;
      const { sources, sourceRoot = "" } = JSON.parse(readFileSync(path, "utf8"));
      for (const source of sources)
        if (!existsSync(join(dirname(path), sourceRoot, source))) unresolved.push(`${file}: ${source}`);
    } else if (file.endsWith(".d.ts") && /\bAPI\.md\b|\bdesign 00\d/.test(readFileSync(path, "utf8"))) {
      citing.push(file);
    }
  }
  if (unresolved.length > 0)
    fail(
      `${unresolved.length} source map entries point at missing files: ${unresolved.slice(0, 3).join(", ")}`,
    );
  if (citing.length > 0)
    fail(
      `${citing.length} .d.ts files cite internal documents (API.md, design 00x): ${citing.slice(0, 3).join(", ")}`,
    );
  console.log(`shipped: ${maps} source maps, each source found in the package`);
}

const COMPILER_OPTIONS = {
  strict: true,
  module: "nodenext",
  moduleResolution: "nodenext",
  target: "es2022",
  types: ["node"],
  // Our .d.ts files are checked too: against an older xstate, a type they name might not exist.
  skipLibCheck: false,
  outDir: "out",
};

/** One project per module system, sharing the install above them (Node and TypeScript walk up). */
function writeProject(project, system) {
  const dir = join(project, system);
  mkdirSync(dir);
  for (const file of ["types.ts", "smoke.ts"]) cpSync(join(FIXTURES, file), join(dir, file));
  if (system === "cjs") cpSync(join(FIXTURES, "cjs-only", "requireStyle.ts"), join(dir, "requireStyle.ts"));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ type: system === "esm" ? "module" : "commonjs" }),
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: COMPILER_OPTIONS, include: ["*.ts"] }, null, 2),
  );
  return dir;
}

async function typecheck(dir, label) {
  const tsc = await run(process.execPath, [TSC, "-p", dir], { cwd: dir, timeoutMs: 180_000 });
  // One line per error (the elaboration under each is long and repeats for every error).
  const errors = (tsc.stdout + tsc.stderr).split("\n").filter((line) => /\berror TS\d+/.test(line));
  if (!tsc.ok)
    fail(`${label}: tsc --strict (${tsc.why}), ${errors.length} errors:\n${indent(errors.join("\n"), 15)}`);
  return tsc;
}

/** The compiled smoke run (tsc emits even with type errors, so the run says whether the code works). */
async function smoke(dir, label) {
  const smoked = await run(process.execPath, [join(dir, "out", "smoke.js")], { cwd: dir, timeoutMs: 60_000 });
  if (!smoked.ok) fail(`${label}: smoke run (${smoked.why}):\n${indent(smoked.stderr || smoked.stdout)}`);
  else if (smoked.stderr.trim() !== "")
    fail(`${label}: the smoke run wrote to stderr:\n${indent(smoked.stderr)}`);
  else console.log(indent(smoked.stdout));
  return smoked.ok && smoked.stderr.trim() === "";
}

// A cold load of the root alone in a fresh process: how long it takes, how many values it exports,
// and which network modules it pulled in (none: the root starts no server).
const LOAD_CHECK = (load) => `
const t = performance.now();
const root = ${load}("a2a-statecharts");
const ms = performance.now() - t;
const network = process.moduleLoadList.filter((m) => /^NativeModule (net|http|https|tls)$/.test(m));
console.log(JSON.stringify({ ms, names: Object.keys(root).length, network }));`;

// Then, for CommonJS, require() of every entry point: an async module (top-level await) fails it.
async function loadChecks(dir, system, label) {
  const code =
    system === "esm"
      ? ["--input-type=module", "-e", LOAD_CHECK("await import")]
      : ["-e", LOAD_CHECK("require")];
  const cold = await run(process.execPath, code, { cwd: dir });
  let ms = Number.NaN;
  if (!cold.ok) fail(`${label}: loading the root (${cold.why}):\n${indent(cold.stderr)}`);
  else {
    const result = JSON.parse(cold.stdout);
    ms = result.ms;
    if (result.network.length > 0) fail(`${label}: loading the root loads ${result.network.join(", ")}`);
    if (result.names > LIMITS.rootNames)
      fail(`${label}: the root exports ${result.names} values (> ${LIMITS.rootNames})`);
  }
  if (cold.stderr.trim() !== "") fail(`${label}: loading the root printed:\n${indent(cold.stderr)}`);
  if (system === "cjs") {
    const all = ENTRY_POINTS.map((entry) => `require("a2a-statecharts${entry}");`).join("\n");
    const required = await run(process.execPath, ["-e", all], { cwd: dir });
    if (!required.ok || required.stderr.trim() !== "")
      fail(`${label}: require() of every entry point (${required.why}):\n${indent(required.stderr)}`);
  }
  return ms;
}

async function checkPeerSet(name, peers, tarball, dir, outsideRanges) {
  const project = join(dir, name);
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: `consumer-${name}`, version: "1.0.0", private: true }),
  );
  // pg is for ./postgres only: what it adds is measured on its own, after the install a gateway always has.
  const { pg, ...measured } = peers;
  const specs = Object.entries(measured).map(([pkg, version]) => `${pkg}@${version}`);
  console.log(`\n--- ${name}: npm i a2a-statecharts ${specs.join(" ")}, then pg@${pg}`);
  const npmI = ["i", ...NPM_QUIET, ...(outsideRanges ? ["--legacy-peer-deps"] : [])];
  const installed = await run("npm", [...npmI, tarball, ...specs], { cwd: project, timeoutMs: 300_000 });
  if (!installed.ok) {
    fail(`${name}: npm i ${specs.join(" ")} (${installed.why}):\n${indent(installed.stderr)}`);
    const failed = {
      megabytes: Number.NaN,
      packages: Number.NaN,
      tsc: false,
      smoke: false,
      loadMs: Number.NaN,
    };
    return [{ peers: `${specs.join(" ")} (install failed)`, system: "-", ...failed }];
  }
  const versions = Object.keys(measured).map((pkg) => `${pkg}@${versionIn(project, pkg)}`);
  const megabytes = await diskMegabytes(join(project, "node_modules"));
  const packages = packageCount(project);
  console.log(
    `installed ${versions.join(" ")} in ${installed.seconds.toFixed(0)} s: ` +
      `${megabytes.toFixed(1)} MB on disk, ${packages} packages`,
  );
  if (megabytes > LIMITS.megabytes)
    fail(`${name}: the install takes ${megabytes.toFixed(1)} MB (> ${LIMITS.megabytes})`);
  if (packages > LIMITS.packages)
    fail(`${name}: the install has ${packages} packages (> ${LIMITS.packages})`);
  checkShipped(project);
  if (existsSync(join(project, "node_modules", "mermaid")))
    fail(`${name}: mermaid got installed (the inspector must serve the bundle the package ships)`);

  const withPg = await run("npm", [...npmI, `pg@${pg}`], { cwd: project, timeoutMs: 120_000 });
  if (!withPg.ok) fail(`${name}: npm i pg@${pg} (${withPg.why}):\n${indent(withPg.stderr)}`);
  else {
    const more = (await diskMegabytes(join(project, "node_modules"))) - megabytes;
    console.log(
      `then pg@${versionIn(project, "pg")} (for a2a-statecharts/postgres): ${more.toFixed(1)} MB more, ` +
        `${packageCount(project) - packages} packages more`,
    );
    versions.push(`pg@${versionIn(project, "pg")}`);
  }

  // What type-checking needs, added after the measurement so it is not counted.
  const types = await run("npm", [...npmI, "-D", "@types/node@20"], { cwd: project, timeoutMs: 120_000 });
  if (!types.ok) fail(`${name}: npm i -D @types/node@20 (${types.why}):\n${indent(types.stderr)}`);

  const systems = ["esm", "cjs"];
  const dirs = systems.map((system) => writeProject(project, system));
  // Both compilers at once: CI has two cores, and each mostly waits on its own file reads.
  const compiled = await Promise.all(systems.map((system, i) => typecheck(dirs[i], `${name} ${system}`)));
  const rows = [];
  for (const [i, system] of systems.entries()) {
    const label = `${name} ${system}`;
    const smokeOk = await smoke(dirs[i], label);
    const loadMs = await loadChecks(dirs[i], system, label);
    rows.push({
      peers: versions.join(" "),
      system,
      megabytes,
      packages,
      tsc: compiled[i].ok,
      smoke: smokeOk,
      loadMs,
    });
  }
  return rows;
}

/**
 * A gateway with its own Discord code installs `a2a-statecharts xstate` only: the root and ./durable
 * type-check and answer a mention without discord.js, and what needs discord.js names it as missing.
 */
async function checkWithoutDiscord(tarball, dir, outsideRanges) {
  const name = "without discord.js";
  const project = join(dir, "without-discord");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer-without-discord", version: "1.0.0", private: true, type: "module" }),
  );
  console.log(`\n--- ${name}: npm i a2a-statecharts xstate`);
  const npmI = ["i", ...NPM_QUIET, ...(outsideRanges ? ["--legacy-peer-deps"] : [])];
  const installed = await run("npm", [...npmI, tarball, "xstate"], { cwd: project, timeoutMs: 300_000 });
  const row = { peers: "xstate only", system: "esm", megabytes: Number.NaN, packages: Number.NaN };
  if (!installed.ok) {
    fail(`${name}: npm i xstate (${installed.why}):\n${indent(installed.stderr)}`);
    return [{ ...row, tsc: false, smoke: false, loadMs: Number.NaN }];
  }
  row.peers = `xstate@${versionIn(project, "xstate")}, no discord.js`;
  row.megabytes = await diskMegabytes(join(project, "node_modules"));
  row.packages = packageCount(project);
  console.log(
    `installed in ${installed.seconds.toFixed(0)} s: ${row.megabytes.toFixed(1)} MB on disk, ${row.packages} packages`,
  );
  if (existsSync(join(project, "node_modules", "discord.js")))
    fail(`${name}: discord.js got installed, although it is an optional peer dependency`);
  const types = await run("npm", [...npmI, "-D", "@types/node@20"], { cwd: project, timeoutMs: 120_000 });
  if (!types.ok) fail(`${name}: npm i -D @types/node@20 (${types.why}):\n${indent(types.stderr)}`);

  cpSync(join(FIXTURES, "withoutDiscord.ts"), join(project, "withoutDiscord.ts"));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({ compilerOptions: COMPILER_OPTIONS, include: ["*.ts"] }),
  );
  const compiled = await typecheck(project, name);
  const stateDir = mkdtempSync(join(dir, "state-"));
  const smoked = await run(process.execPath, [join(project, "out", "withoutDiscord.js"), stateDir], {
    cwd: project,
  });
  const smokeOk = smoked.ok && smoked.stderr.trim() === "";
  if (!smokeOk) fail(`${name}: the run (${smoked.why}):\n${indent(smoked.stderr || smoked.stdout)}`);
  else console.log(indent(smoked.stdout));

  // The CLI: what needs no discord.js runs, what needs it says so.
  const bin = join(project, "node_modules", "a2a-statecharts", "dist", "cli", "bin.js");
  const config = await run(process.execPath, [bin, "config"], { cwd: project });
  if (!config.ok) fail(`${name}: a2a-statecharts config (${config.why}):\n${indent(config.stderr)}`);
  const demo = await run(process.execPath, [bin, "demo"], { cwd: project });
  if (demo.ok || !demo.stderr.includes("needs discord.js, which is not installed"))
    fail(
      `${name}: a2a-statecharts demo should name discord.js as missing, got (${demo.why}):\n${indent(demo.stderr)}`,
    );
  else console.log("    a2a-statecharts config runs; demo names discord.js as missing");
  const loadMs = await loadChecks(project, "esm", name);
  return [{ ...row, tsc: compiled.ok, smoke: smokeOk && config.ok, loadMs }];
}

function printTable(rows) {
  const header = ["peer set", "module", "install MB", "packages", "tsc", "smoke", "cold load"];
  const cells = rows.map((row) => [
    row.peers,
    row.system,
    Number.isNaN(row.megabytes) ? "-" : row.megabytes.toFixed(1),
    Number.isNaN(row.packages) ? "-" : String(row.packages),
    row.tsc ? "ok" : "FAIL",
    row.smoke ? "ok" : "FAIL",
    Number.isNaN(row.loadMs) ? "FAIL" : `${row.loadMs.toFixed(0)} ms`,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((cell) => cell[i].length)));
  const line = (cell) => cell.map((text, i) => text.padEnd(widths[i])).join("  ");
  console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const cell of cells) console.log(line(cell));
}

async function main() {
  const { values } = parseArgs({
    options: {
      peers: { type: "string", multiple: true },
      keep: { type: "boolean", default: false },
      "outside-ranges": { type: "boolean", default: false },
    },
  });
  const sets =
    values.peers === undefined
      ? Object.entries(PEER_SETS)
      : values.peers.map((spec) => [spec.replaceAll(/[^\w.-]+/g, "_"), parsePeerSet(spec)]);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "a2a-consumer-"));
  const rows = [];
  try {
    const tarball = await pack(dir);
    for (const [name, peers] of sets)
      rows.push(...(await checkPeerSet(name, peers, tarball, dir, values["outside-ranges"])));
    if (values.peers === undefined)
      rows.push(...(await checkWithoutDiscord(tarball, dir, values["outside-ranges"])));
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  printTable(rows);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  if (failures.length > 0) {
    console.error(`\nconsumer test: ${failures.length} failures in ${seconds} s`);
    for (const failure of failures) console.error(`- ${failure.split("\n")[0]}`);
    process.exitCode = 1;
  } else console.log(`\nconsumer test: ok in ${seconds} s`);
}

main().catch((error) => {
  console.error(`consumer test: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
