import type { CliIO } from "./io.js";

/**
 * Output for a terminal: ordinary lines scroll as usual, and `status` keeps one line at the bottom,
 * redrawn in place (the demo's live progress). Every ordinary line first clears it, then redraws it.
 */
export function terminalIO(stdout: NodeJS.WriteStream, stderr: NodeJS.WriteStream): Required<CliIO> {
  let status = "";
  const clear = () => (status === "" ? "" : "\r\x1b[2K");
  const fit = (line: string) => line.slice(0, Math.max(0, (stdout.columns || 80) - 1));
  return {
    out(line) {
      stdout.write(`${clear()}${line}\n${fit(status)}`);
    },
    err(line) {
      stdout.write(clear());
      stderr.write(`${line}\n`);
      stdout.write(fit(status));
    },
    status(line) {
      stdout.write(`${clear()}${fit(line)}`);
      status = line;
    },
  };
}
