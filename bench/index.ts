// `npm run bench`: runs every bench/*.bench.ts in sequence, each in its own child process
// (`node --import tsx <file>`) so that memory figures such as peak RSS belong to one benchmark, and
// prints their tables as they come, then a summary. Benchmarks are not part of the test suite.
// Run: npx tsx bench/index.ts [name-filter ...] [--flag value ...]   e.g. npm run bench -- runtime
//      The flags after the names go to the one benchmark they name: npm run bench -- scale --sizes 1000,10000
//      npx tsx bench/index.ts runtime --against <git rev> [--rounds N]: the runtime benchmark on that
//      revision and on this tree, alternating, then (b), (c) and (d) side by side (bench/sideBySide.ts).
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { sideBySide } from "./sideBySide.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a value`);
  args.splice(at, 2);
  return value;
};
const against = option("--against");
// --rounds is also a flag of several benchmarks: it is this script's only beside --against.
const rounds = Number((against === undefined ? undefined : option("--rounds")) ?? "2");
const firstFlag = args.findIndex((arg) => arg.startsWith("-"));
const filters = firstFlag < 0 ? args : args.slice(0, firstFlag);
const passed = firstFlag < 0 ? [] : args.slice(firstFlag);

function run(file: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", file, ...passed], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
}

async function cpuModel(): Promise<string> {
  try {
    const info = await readFile("/proc/cpuinfo", "utf8");
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1] ?? cpus()[0]?.model ?? "unknown CPU";
  } catch {
    return cpus()[0]?.model ?? "unknown CPU";
  }
}

async function main(): Promise<void> {
  if (against !== undefined) {
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds must be a whole number from 1");
    if (filters.length !== 1 || filters[0] !== "runtime")
      throw new Error("--against compares the runtime benchmark: npm run bench -- runtime --against <rev>");
    await sideBySide(join(here, ".."), against, rounds);
    return;
  }
  const files = (await readdir(here))
    .filter((name) => name.endsWith(".bench.ts"))
    .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
    .sort();
  if (files.length === 0) throw new Error(`no bench/*.bench.ts matches ${filters.join(", ")}`);
  // Benchmarks read the same flag names differently (--rounds, --seconds): flags go to one of them only.
  if (passed.length > 0 && files.length !== 1)
    throw new Error(
      `${passed.join(" ")} is for one benchmark: name it first (npm run bench -- scale --sizes 1000); ` +
        `${files.join(", ")} matched`,
    );
  console.log(
    `a2a-statecharts benchmarks, ${new Date().toISOString()}: node ${process.version}, ` +
      `${cpus().length} × ${await cpuModel()}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
  );
  const results: Array<{ name: string; seconds: number; outcome: string }> = [];
  for (const name of files) {
    console.log(`\n=== ${name} ${"=".repeat(Math.max(0, 72 - name.length))}\n`);
    const started = performance.now();
    const { code, signal } = await run(join(here, name));
    const outcome = signal !== null ? `killed by ${signal}` : code === 0 ? "ok" : `exit code ${code}`;
    results.push({ name, seconds: (performance.now() - started) / 1000, outcome });
  }
  console.log("\n=== summary\n");
  console.log("| benchmark | seconds | outcome |");
  console.log("|---|---|---|");
  for (const r of results) console.log(`| ${r.name} | ${r.seconds.toFixed(1)} | ${r.outcome} |`);
  if (results.some((r) => r.outcome !== "ok")) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
