/** Where a command writes: lines to stdout and stderr. Tests pass arrays; bin.ts passes the console. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** One line redrawn in place at the bottom (a terminal only); "" removes it. */
  status?(line: string): void;
}

/** An error's message, its first line only: one line per problem on stderr. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? text;
}

/** What node:util's parseArgs says of a bad flag: its first sentence, which names the flag (the rest is advice about `--`). */
export function flagProblem(error: unknown): string {
  return firstLine(error).split(". ")[0] ?? "";
}
