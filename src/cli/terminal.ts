import { type CliIO, streamWrite } from "./io.js";

/**
 * Output for a terminal: ordinary lines scroll as usual, and `status` keeps one line at the bottom,
 * redrawn in place (the demo's live progress). Every ordinary line first clears it, then redraws it.
 */
export function terminalIO(stdout: NodeJS.WriteStream, stderr: NodeJS.WriteStream): Required<CliIO> {
  let status = "";
  let write: ((text: string) => Promise<boolean>) | undefined;
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
    // Text in pieces may end mid-line, where no status line can be drawn: it is removed until status() is called again.
    write(text) {
      write ??= streamWrite(stdout);
      const written = write(`${clear()}${text}`);
      status = "";
      return written;
    },
    status(line) {
      stdout.write(`${clear()}${fit(line)}`);
      status = line;
    },
  };
}
