/** Where a command writes: lines to stdout and stderr. Tests pass arrays; bin.ts passes the console. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** One line redrawn in place at the bottom (a terminal only); "" removes it. */
  status?(line: string): void;
}
