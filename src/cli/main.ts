import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { A2AConfigError, parseConfig } from "../policies/index.js";
import { type CliIO, orReport, readCommandLine } from "./io.js";
import { loadPeer } from "./peerDependencies.js";

const HELP = `a2a-statecharts — the agent-to-agent control plane as XState statecharts

Usage:
  a2a-statecharts demo [--speed N] [--state-dir DIR]   the whole control plane on the bundled Discord
                                                       emulator, the designs' scenarios in accelerated time
  a2a-statecharts status [--state-dir DIR] [--json]    the persisted actors: machine, state, attempts, next due
          [--postgres URL [--schema S]]                with PostgreSQL: also each process and its lease
  a2a-statecharts stats [--state-dir DIR] [--since T]  figures from the event log: flows, retries, mentions,
          [--json] [--html FILE]                       latency, turns saved; by agent and pair; an HTML page
  a2a-statecharts inspect [--port N] [--exit]          the demo with a live statechart page on 127.0.0.1;
          [--stately-relay [N]]                        with the flag, also the @statelyai/inspect relay on
                                                       127.0.0.1 (both show conversation text to local processes)
  a2a-statecharts diagram [--out DIR] [--check]        the statechart pages (Mermaid), to stdout or into DIR
  a2a-statecharts config [file.json]                   validate a config file and print it with every default
  a2a-statecharts --help | --version

Every command answers --help.`;

type Command = (argv: string[], io: CliIO) => Promise<number>;

// Loaded when run: `demo` and `inspect` need discord.js, an optional peer dependency that `status` does not.
const COMMANDS: Record<string, () => Promise<Command>> = {
  demo: () => loadPeer(async () => (await import("./demoCommand.js")).runDemoCommand),
  status: () => loadPeer(async () => (await import("./status.js")).runStatus),
  stats: () => loadPeer(async () => (await import("./stats.js")).runStats),
  inspect: () => loadPeer(async () => (await import("./inspectCommand.js")).runInspect),
  diagram: () => loadPeer(async () => (await import("./diagram.js")).runDiagram),
  config: async () => runConfig,
};

export async function main(
  argv: string[],
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
  status?: (line: string) => void,
  write?: (text: string) => Promise<boolean>,
): Promise<number> {
  const io: CliIO = {
    out,
    err,
    ...(status === undefined ? {} : { status }),
    ...(write === undefined ? {} : { write }),
  };
  const [command, ...rest] = argv;
  if (command !== undefined && Object.hasOwn(COMMANDS, command)) {
    const load = COMMANDS[command] as () => Promise<Command>;
    const run = await orReport(io, load(), (message) => `a2a-statecharts ${command}: ${message}`);
    return run === undefined ? 1 : run(rest, io);
  }
  let values: { help?: boolean; version?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } },
    }));
  } catch (error) {
    err(`a2a-statecharts: ${(error as Error).message}`);
    return 2;
  }
  if (values.version === true) {
    out((createRequire(import.meta.url)("../../package.json") as { version: string }).version);
    return 0;
  }
  if (values.help === true || positionals.length === 0) {
    out(HELP);
    return values.help === true ? 0 : 2;
  }
  err(`a2a-statecharts: unknown command "${positionals.join(" ")}" (see --help)`);
  return 2;
}

const CONFIG_USAGE = `Usage: a2a-statecharts config [file.json]

Validates a config file and prints it with every default filled in; without a file,
prints the defaults. Keys of the design documents' samples that are read elsewhere or ignored are
reported as warnings on stderr. Every setting is described in docs/config.md.`;

async function runConfig(argv: string[], io: CliIO): Promise<number> {
  const file = readCommandLine(io, "config", CONFIG_USAGE, argv, {}, ({ positionals }) => positionals[0], 1);
  if (typeof file === "number") return file;
  let input: unknown;
  if (file !== undefined) {
    try {
      input = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      io.err(`a2a-statecharts: cannot read ${file}: ${(error as Error).message}`);
      return 1;
    }
  }
  try {
    // Warnings go to stderr so stdout stays the parsed config, valid JSON.
    const config = parseConfig(input, { onWarning: (message) => io.err(`warning: ${message}`) });
    io.out(JSON.stringify(config, null, 2));
    return 0;
  } catch (error) {
    if (!(error instanceof A2AConfigError)) throw error;
    io.err(error.message);
    return 1;
  }
}
