import { createWebSocketInspector } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import type { InspectionEvent } from "xstate";
import { DEMO_OPTIONS, demoOptionsFrom, playDemo, UsageError } from "./demoCommand.js";
import { startInspectorServer } from "./inspect/InspectorServer.js";
import type { CliIO } from "./io.js";

const INSPECT_USAGE = `Usage: a2a-statecharts inspect [options] [demo options]

Runs the demo (see \`a2a-statecharts demo --help\`; the same options apply) with two live viewers:
  - the offline statechart page on 127.0.0.1: every actor, its machine drawn with the current state
    highlighted, and the event stream (Mermaid is served from node_modules: no internet needed);
  - the @statelyai/inspect WebSocket inspector, for Stately's tools (its relay page embeds
    stately.ai/inspect, so that browser needs internet; the relay listens on every interface).
When the demo ends, the viewers keep serving until Ctrl-C (or --exit).

Options:
  --port N          the offline page's port (default 7474; 0 picks a free one)
  --stately-port N  the @statelyai/inspect relay's port (default 8080; 0 turns it off)
  --exit            stop serving when the demo ends
  --speed N         demo speed (default 10 here, slow enough to watch)
  -h, --help`;

function port(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${raw}"`);
  }
  return value;
}

// createInspectorServer listens without an error handler, so a taken port would crash the process:
// look first (on every interface, as it listens).
async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once("error", () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

/** `a2a-statecharts inspect`: the demo with the offline page and the Stately WebSocket inspector attached. */
export async function runInspect(argv: string[], io: CliIO): Promise<number> {
  let settings: { port: number; statelyPort: number; exit: boolean };
  let demo: ReturnType<typeof demoOptionsFrom>;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        ...DEMO_OPTIONS,
        port: { type: "string" },
        "stately-port": { type: "string" },
        exit: { type: "boolean" },
      },
    });
    if (values.help === true) {
      io.out(INSPECT_USAGE);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    settings = {
      port: port("--port", values.port, 7474),
      statelyPort: port("--stately-port", values["stately-port"], 8080),
      exit: values.exit === true,
    };
    demo = demoOptionsFrom({ ...values, speed: values.speed ?? "10" }, io.out);
    if (io.status !== undefined) demo.progress = io.status;
  } catch (error) {
    io.err(`a2a-statecharts inspect: ${(error as Error).message} (see --help)`);
    return 2;
  }

  let page: Awaited<ReturnType<typeof startInspectorServer>>;
  try {
    page = await startInspectorServer({ port: settings.port });
  } catch (error) {
    io.err(
      `a2a-statecharts inspect: cannot serve the page on 127.0.0.1:${settings.port}: ${(error as Error).message}`,
    );
    return 1;
  }
  if (settings.statelyPort !== 0 && !(await portIsFree(settings.statelyPort))) {
    await page.close();
    io.err(
      `a2a-statecharts inspect: port ${settings.statelyPort} is in use; pass --stately-port with another ` +
        "port, or 0 to run without the @statelyai/inspect relay",
    );
    return 1;
  }
  const stately =
    settings.statelyPort === 0
      ? undefined
      : (() => {
          const relay = createInspectorServer({ port: settings.statelyPort, autoOpen: false });
          const inspector = createWebSocketInspector({ url: `ws://127.0.0.1:${settings.statelyPort}` });
          return { relay, inspector };
        })();
  io.out(`offline statechart page:  ${page.url}`);
  if (stately !== undefined) {
    io.out(
      `@statelyai/inspect relay: http://localhost:${settings.statelyPort} (WebSocket ws://127.0.0.1:${settings.statelyPort})`,
    );
  }
  const inspect = (event: InspectionEvent): void => {
    page.inspect(event);
    stately?.inspector.inspect.next?.(event);
  };
  try {
    const code = await playDemo({ ...demo, inspect }, io, "inspect");
    if (!settings.exit) {
      io.out(`\nthe viewers keep serving at ${page.url}; press Ctrl-C to stop`);
      await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
    }
    return code;
  } finally {
    stately?.inspector.stop();
    stately?.relay.stop();
    await page.close();
  }
}
