import type { createWebSocketInspector } from "@statelyai/inspect";
import type { InspectionEvent } from "xstate";
import { DEMO_OPTIONS, demoOptionsFrom, playDemo } from "./demoCommand.js";
import { startInspectorServer } from "../inspector/InspectorServer.js";
import { type StatelyRelay, startStatelyRelay } from "./StatelyRelay.js";
import { type CliIO, orReport, readCommandLine, UsageError } from "./io.js";
import { loadPeer } from "./peerDependencies.js";

const DEFAULT_RELAY_PORT = 8080;

const INSPECT_USAGE = `Usage: a2a-statecharts inspect [options] [demo options]

Runs the demo (see \`a2a-statecharts demo --help\`; the same options apply) with the offline
statechart page on 127.0.0.1: every actor, its machine drawn with the current state highlighted, and
the event stream (the package ships Mermaid: no internet needed).
With --stately-relay, also the @statelyai/inspect relay for Stately's tools (its page embeds
stately.ai/inspect, so that browser needs internet). Off by default.
When the demo ends, they keep serving until Ctrl-C (or --exit).

Both listen on 127.0.0.1 only, without authentication: they show every actor's events and context,
the agents' conversation text included, to any process on this machine (other machines cannot
connect; web pages of other sites are refused).

Options:
  --port N               the offline page's port (default 7474; 0 picks a free one)
  --stately-relay [N]    also run the @statelyai/inspect relay on 127.0.0.1:N
                         (default ${DEFAULT_RELAY_PORT}; 0 picks a free one)
  --exit                 stop serving when the demo ends
  --speed N              demo speed (default 10 here, slow enough to watch)
  -h, --help`;

function port(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${raw}"`);
  }
  return value;
}

/** `--stately-relay` takes an optional port, which parseArgs cannot express: a bare flag gets the default. */
function withRelayPort(argv: string[]): string[] {
  return argv.flatMap((arg, i) => {
    const next = argv[i + 1];
    const bare = arg === "--stately-relay" && (next === undefined || next.startsWith("-"));
    return bare ? [`--stately-relay=${DEFAULT_RELAY_PORT}`] : [arg];
  });
}

/** `a2a-statecharts inspect`: the demo with the offline page and the Stately WebSocket inspector attached. */
export async function runInspect(argv: string[], io: CliIO): Promise<number> {
  const options = {
    ...DEMO_OPTIONS,
    port: { type: "string" },
    "stately-relay": { type: "string" },
    exit: { type: "boolean" },
  } as const;
  const flags = readCommandLine(io, "inspect", INSPECT_USAGE, withRelayPort(argv), options, ({ values }) => ({
    port: port("--port", values.port, 7474),
    relayPort:
      values["stately-relay"] === undefined
        ? undefined
        : port("--stately-relay", values["stately-relay"], DEFAULT_RELAY_PORT),
    exit: values.exit === true,
    demo: demoOptionsFrom({ ...values, speed: values.speed ?? "10" }, io),
  }));
  if (typeof flags === "number") return flags;
  const { demo, ...settings } = flags;

  const page = await orReport(
    io,
    startInspectorServer({ port: settings.port }),
    (message) => `a2a-statecharts inspect: cannot serve the page on 127.0.0.1:${settings.port}: ${message}`,
  );
  if (page === undefined) return 1;
  let stately: { relay: StatelyRelay; inspector: ReturnType<typeof createWebSocketInspector> } | undefined;
  // From here on every return closes what was started.
  try {
    if (settings.relayPort !== undefined) {
      const createInspector = await orReport(
        io,
        // An optional peer dependency: only the relay needs it.
        loadPeer(async () => (await import("@statelyai/inspect")).createWebSocketInspector),
        (message) => `a2a-statecharts inspect --stately-relay: ${message}`,
      );
      if (createInspector === undefined) return 1;
      const relay = await orReport(
        io,
        startStatelyRelay({ port: settings.relayPort }),
        (message) =>
          `a2a-statecharts inspect: cannot run the @statelyai/inspect relay on 127.0.0.1:${settings.relayPort}: ` +
          `${message}; pass --stately-relay with another port, or leave it out`,
      );
      if (relay === undefined) return 1;
      stately = { relay, inspector: createInspector({ url: relay.wsUrl }) };
    }
    io.out(`offline statechart page:  ${page.url}`);
    if (stately !== undefined) {
      io.out(
        `@statelyai/inspect relay: ${stately.relay.url} (WebSocket ${stately.relay.wsUrl}); it streams every ` +
          "actor's events and context, conversation text included, to any process on this machine",
      );
    }
    const inspect = (event: InspectionEvent): void => {
      page.inspect(event);
      stately?.inspector.inspect.next?.(event);
    };
    const code = await playDemo({ ...demo, inspect }, io, "inspect");
    if (!settings.exit) {
      io.out(`\nthe viewers keep serving at ${page.url}; press Ctrl-C to stop`);
      await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
    }
    return code;
  } finally {
    stately?.inspector.stop();
    await stately?.relay.close();
    await page.close();
  }
}
