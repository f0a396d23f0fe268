// What importing the package costs a gateway before it does anything: a fresh `node` process imports
// one entry point of the built package (dist/), `import` and `require` alike, and the time to the
// module's namespace is taken, over interleaved rounds (medians). Side by side in the same run: every
// entry point at once, which is what the root loaded before it was split (the emulator, the inspector
// server and discord.js came with it), and the ratio root / all.
// Run: npm run build && npx tsx bench/import.bench.ts [--rounds N]
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const at = process.argv.indexOf("--rounds");
const ROUNDS = Number(at >= 0 ? process.argv[at + 1] : "15");
const ENTRY_POINTS = [
  "index",
  "policies/entryPoint",
  "discord/index",
  "durable/index",
  "testing/index",
  "inspector/index",
];

const file = (entry: string) => join(ROOT, "dist", `${entry}.js`);

/** Milliseconds from a fresh process's start of the import to its namespace, measured inside it. */
async function coldImport(entries: string[], how: "import" | "require"): Promise<number> {
  const load =
    how === "import"
      ? `Promise.all(${JSON.stringify(entries.map(file))}.map((f) => import(f)))`
      : `Promise.resolve(${JSON.stringify(entries.map(file))}.map((f) => require(f)))`;
  const script = `const t = process.hrtime.bigint(); ${load}.then(() => console.log(Number(process.hrtime.bigint() - t) / 1e6));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { cwd: ROOT });
  return Number(stdout.trim());
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error("--rounds must be a whole number from 1");
  if (!ENTRY_POINTS.every((e) => existsSync(file(e)))) {
    throw new Error("dist/ is missing an entry point: run `npm run build` first");
  }
  const cases = [
    ...ENTRY_POINTS.map((entry) => ({
      name: entry === "index" ? "." : `./${dirname(entry)}`,
      entries: [entry],
    })),
    { name: "all entry points (the root before the split)", entries: ENTRY_POINTS },
  ];
  const times = new Map<string, number[]>();
  // Interleaved, so a slow moment of the machine hurts every case alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) {
      for (const how of ["import", "require"] as const) {
        const key = `${c.name}\u0000${how}`;
        times.set(key, [...(times.get(key) ?? []), await coldImport(c.entries, how)]);
      }
    }
  }
  const row = (name: string, how: string) => median(times.get(`${name}\u0000${how}`) ?? []);
  console.log(`cold import of the built package, median of ${ROUNDS} fresh processes each (ms)\n`);
  console.log("| entry point | import | require |");
  console.log("|---|---|---|");
  for (const c of cases)
    console.log(`| ${c.name} | ${row(c.name, "import").toFixed(0)} | ${row(c.name, "require").toFixed(0)} |`);
  const all = cases[cases.length - 1]?.name ?? "";
  console.log(
    `\nroot / all entry points: ${(row(".", "import") / row(all, "import")).toFixed(2)} (import), ` +
      `${(row(".", "require") / row(all, "require")).toFixed(2)} (require)`,
  );
}

await main();
