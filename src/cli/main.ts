import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { A2AConfigError, parseConfig } from "../services/index.js";
import { runPolicyDemo } from "./policyDemo.js";

const HELP = `a2a-statecharts — the agent-to-agent control plane as XState statecharts

Usage:
  a2a-statecharts demo                 play the designs' scenarios through the policy layer
  a2a-statecharts config [file.json]   validate a config file and print it with every default filled in
  a2a-statecharts --help | --version`;

export async function main(argv: string[], out = console.log, err = console.error): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    err(`a2a-statecharts: ${(error as Error).message}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) {
    out(await version());
    return 0;
  }
  if (values.help || command === undefined) {
    out(HELP);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command === "demo" && rest.length === 0) {
    const results = runPolicyDemo(out);
    const failed = results.filter((r) => r.actual !== r.expected);
    out(
      `\nscenarios: ${results.length - failed.length} reached their expected end, ${failed.length} did not`,
    );
    return failed.length === 0 ? 0 : 1;
  }
  if (command === "config" && rest.length <= 1) return checkConfig(rest[0], out, err);
  err(`a2a-statecharts: unknown command "${positionals.join(" ")}" (see --help)`);
  return 2;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } },
  });
}

async function checkConfig(
  file: string | undefined,
  out: typeof console.log,
  err: typeof console.error,
): Promise<number> {
  let input: unknown;
  if (file !== undefined) {
    try {
      input = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      err(`a2a-statecharts: cannot read ${file}: ${(error as Error).message}`);
      return 1;
    }
  }
  try {
    out(JSON.stringify(parseConfig(input), null, 2));
    return 0;
  } catch (error) {
    if (!(error instanceof A2AConfigError)) throw error;
    err(error.message);
    return 1;
  }
}

async function version(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
