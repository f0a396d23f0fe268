import type { Writable } from "node:stream";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { A2AError } from "../errors/A2AError.js";

/** Where a command writes: lines to stdout and stderr. Tests collect arrays; bin.ts passes the process's streams. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** One line redrawn in place at the bottom (a terminal only); "" removes it. */
  status?(line: string): void;
  /** Text to stdout as is, for output too large for one string; resolves once stdout takes more, false once its reader is gone. */
  write?(text: string): Promise<boolean>;
}

/** `writeText` batches pieces up to this many characters: few writes, and no string that grows with the output. */
export const WRITE_SIZE = 65_536;

/** Writes `pieces` in batches of up to `writeSize` characters; an IO without `write` (tests) gets `out` lines. */
export async function writeText(io: CliIO, pieces: Iterable<string>, writeSize = WRITE_SIZE): Promise<void> {
  if (io.write === undefined) {
    let partial = "";
    for (const piece of pieces) {
      const lines = (partial + piece).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) io.out(line);
    }
    if (partial !== "") io.out(partial);
    return;
  }
  let batch = "";
  for (const piece of pieces) {
    if (batch.length > 0 && batch.length + piece.length > writeSize) {
      if (!(await io.write(batch))) return;
      batch = "";
    }
    batch += piece;
  }
  if (batch.length > 0) await io.write(batch);
}

/**
 * `CliIO.write` for a Node stream: resolves at once while its buffer has room, else on 'drain' (POSIX
 * pipes are written asynchronously: without waiting, a slow reader piles every piece up in memory). A
 * stream error (EPIPE: the reader closed) makes this and later writes false.
 */
export function streamWrite(stream: Writable): (text: string) => Promise<boolean> {
  let failed = false;
  // Kept for the stream's life: an error after the reader left is an answer (stop), not a crash.
  stream.on("error", () => (failed = true));
  const usable = () => !failed && !stream.destroyed;
  return async (text) => {
    if (!usable()) return false;
    if (stream.write(text)) return true;
    const events = ["drain", "close", "error"] as const;
    await new Promise<void>((resolve) => {
      const done = () => {
        for (const event of events) stream.off(event, done);
        resolve();
      };
      for (const event of events) stream.on(event, done);
    });
    return usable();
  };
}

/** An error's message, its first line only: one line per problem on stderr. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? text;
}

/** What `task` resolves to; when it fails, undefined once `problem(its message)` is on stderr (exit 1 then). */
export async function orReport<T>(
  io: CliIO,
  task: Promise<T>,
  problem: (message: string) => string,
): Promise<T | undefined> {
  return task.catch((error: unknown) => {
    io.err(problem(error instanceof Error ? error.message : String(error)));
    return undefined;
  });
}

/** `--state-dir DIR` (`-d`) of `status` and `stats`, checked. */
export function stateDirOf(values: { "state-dir"?: string }): string {
  const dir = values["state-dir"] ?? ".a2a-state";
  if (dir.trim() === "") throw new UsageError("--state-dir needs a directory, got an empty string");
  return dir;
}

/** A flag or argument of a CLI command that cannot be used; the message names it. */
export class UsageError extends A2AError {
  override readonly code = "CLI_USAGE";
  override readonly name = "UsageError";
}

type FlagOptions = NonNullable<ParseArgsConfig["options"]>;
type Flags<O extends FlagOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>;

/**
 * A command's flags (parseArgs, with -h/--help and at most `maxPositionals` arguments) made by `read`,
 * which throws on a bad one; or the exit status: 0 after the usage for --help, 2 after the problem.
 */
export function readCommandLine<O extends FlagOptions, T>(
  io: CliIO,
  command: string,
  usage: string,
  argv: string[],
  options: O,
  read: (flags: Flags<O>) => T,
  maxPositionals = 0,
): T | number {
  try {
    const flags = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: true,
    });
    if ((flags.values as { help?: boolean }).help === true) {
      io.out(usage);
      return 0;
    }
    const extra = flags.positionals[maxPositionals];
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    return read(flags as unknown as Flags<O>);
  } catch (error) {
    // parseArgs' first sentence names the flag; the rest is advice about `--`.
    io.err(`a2a-statecharts ${command}: ${firstLine(error).split(". ")[0] ?? ""} (see --help)`);
    return 2;
  }
}
