/** Where a command writes: lines to stdout and stderr. Tests pass arrays; bin.ts passes the console. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}
