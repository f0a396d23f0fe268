// `npm run bench -- runtime --against <git rev>`: the runtime benchmark on the old code (a git
// worktree of <rev>, sharing node_modules) and on this tree, alternating, in one run, then the headline
// figures of (b), (c) and (d) side by side with their ratio. Each run is its own process, so peak RSS
// belongs to one benchmark.
import { spawn } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The rows compared: label in the runtime benchmark's tables → how to read its first figure. */
const HEADLINES: Array<{ label: string; unit: "ms" | "MB" | "/s" }> = [
  { label: "start() with 10,000 live actors", unit: "ms" },
  { label: "transitions/s", unit: "/s" },
  { label: "persistence lag p50", unit: "ms" },
  { label: "persistence lag p99", unit: "ms" },
  { label: "peak RSS, 10,000 live actors, (b) + (c)", unit: "MB" },
];

function git(args: string[], cwd: string): Promise<string> {
  return capture("git", args, cwd);
}

function capture(command: string, args: string[], cwd: string, echo = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (echo) process.stdout.write(chunk);
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}

/** The first number of the table row whose first cell is `label` ("1,000" → 1000). */
export function figure(output: string, label: string): number | undefined {
  const row = output.split("\n").find((line) => line.split("|")[1]?.trim() === label);
  const cell = row?.split("|")[2]?.trim();
  const match = cell === undefined ? null : /^([\d,]+(?:\.\d+)?)/.exec(cell);
  return match?.[1] === undefined ? undefined : Number(match[1].replaceAll(",", ""));
}

export async function sideBySide(root: string, base: string, rounds: number): Promise<void> {
  const rev = (await git(["rev-parse", "--short", base], root)).trim();
  const dir = await mkdtemp(join(tmpdir(), "a2a-bench-base-"));
  const worktree = join(dir, "tree");
  await git(["worktree", "add", "--detach", worktree, rev], root);
  try {
    await symlink(join(root, "node_modules"), join(worktree, "node_modules"));
    const sides = { before: worktree, after: root };
    const outputs: Record<keyof typeof sides, string[]> = { before: [], after: [] };
    for (let round = 1; round <= rounds; round += 1) {
      for (const side of ["before", "after"] as const) {
        console.log(`\n=== round ${round}: ${side} (${side === "before" ? rev : "this tree"})\n`);
        const out = await capture(
          process.execPath,
          ["--import", "tsx", "bench/runtime.bench.ts"],
          sides[side],
          true,
        );
        outputs[side].push(out);
      }
    }
    console.log(
      `\n=== side by side: ${rev} (before) and this tree (after), ${rounds} run(s) each, alternating\n`,
    );
    console.log("| measure | before | after | after ÷ before (medians) |");
    console.log("|---|---|---|---|");
    for (const { label, unit } of HEADLINES) {
      const before = outputs.before.map((o) => figure(o, label));
      const after = outputs.after.map((o) => figure(o, label));
      const show = (values: Array<number | undefined>) =>
        values.map((v) => (v === undefined ? "?" : `${v} ${unit}`)).join(" / ");
      const ratio = median(after) / median(before);
      console.log(
        `| ${label} | ${show(before)} | ${show(after)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : "?"} |`,
      );
    }
  } finally {
    await git(["worktree", "remove", "--force", worktree], root).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

function median(values: Array<number | undefined>): number {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (known.length === 0) return Number.NaN;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 === 1
    ? (known[mid] ?? Number.NaN)
    : ((known[mid - 1] ?? 0) + (known[mid] ?? 0)) / 2;
}
