import { main } from "../../src/cli/main.js";

/** Runs the CLI in-process: its exit code and what it printed to stdout and stderr. */
export async function runCli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (line: string) => out.push(line),
    (line: string) => err.push(line),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}
