import { createServer, Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { main } from "../../src/cli/main.js";
import { tempDir } from "../support/tempDir.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Every server the run starts, as [port, host]: each must be bound to 127.0.0.1. */
function recordListens(): () => Array<[unknown, unknown]> {
  const listen = vi.spyOn(Server.prototype, "listen");
  return () => listen.mock.calls.map((args) => [args[0], args[1]]);
}

/** A state directory under a fresh temp dir, removed after the file. */
function stateDir(): string {
  return join(tempDir("a2a-inspect-"), "state");
}

afterEach(() => vi.restoreAllMocks());

describe("a2a-statecharts inspect", () => {
  it("runs the demo with the offline page and, with --stately-relay, the relay on 127.0.0.1 both receiving its actors", async () => {
    const statelyPort = await freePort();
    const listens = recordListens();
    const out: string[] = [];
    const err: string[] = [];
    const relayed: string[] = [];
    let pageUrl: string | undefined;
    let pageState: Promise<unknown> | undefined;
    const done = main(
      [
        "inspect",
        "--exit",
        "--port",
        "0",
        "--stately-relay",
        String(statelyPort),
        "--speed",
        "200",
        "--state-dir",
        stateDir(),
      ],
      (line) => {
        out.push(line);
        // As soon as the viewers are announced, listen on the relay as Stately's page would.
        const relay = /^@statelyai\/inspect relay: .*\(WebSocket (ws:\/\/[^)]+)\)/.exec(line);
        if (relay?.[1] !== undefined) {
          const socket = new WebSocket(relay[1]);
          socket.on("message", (data: Buffer) => relayed.push(data.toString()));
          void done.finally(() => socket.close());
        }
        const page = /^offline statechart page: +(\S+)/.exec(line);
        if (page?.[1] !== undefined) pageUrl = page[1];
        // When the first scenario ends, the page must list the demo's actors.
        if (
          pageUrl !== undefined &&
          pageState === undefined &&
          /^ {2}\+[\d:.]+ {2}\[[^\]]+\] +✔ /.test(line)
        ) {
          pageState = fetch(new URL("state.json", pageUrl)).then((r) => r.json());
        }
      },
      (line) => err.push(line),
    );
    const code = await done;
    expect(err.join("\n")).toBe("");
    expect(code, out.join("\n")).toBe(0);
    expect(out.join("\n")).toMatch(/scenarios: \d+ reached their expected end, 0 did not/);
    expect(relayed.some((m) => m.includes("@xstate.actor"))).toBe(true);
    expect(JSON.stringify(await pageState)).toMatch(/"collaborate"|"a2aFlow"/);
    expect(out.join("\n")).toContain(
      `@statelyai/inspect relay: http://127.0.0.1:${statelyPort} (WebSocket ws://127.0.0.1:${statelyPort}); ` +
        "it streams every actor's events and context, conversation text included, to any process on this machine",
    );
    expect(listens()).toContainEqual([statelyPort, "127.0.0.1"]);
    for (const [port, host] of listens())
      expect(host, `the server on port ${String(port)}`).toBe("127.0.0.1");
  }, 90_000);

  it("runs no relay without --stately-relay: every server it starts is on 127.0.0.1, none on the relay's port", async () => {
    const listens = recordListens();
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ["inspect", "--exit", "--port", "0", "--speed", "200", "--state-dir", stateDir()],
      (line) => out.push(line),
      (line) => err.push(line),
    );
    expect(err.join("\n")).toBe("");
    expect(code, out.join("\n")).toBe(0);
    expect(out.join("\n")).not.toMatch(/relay/);
    expect(listens().length).toBeGreaterThan(0);
    for (const [port, host] of listens()) {
      expect(host, `the server on port ${String(port)}`).toBe("127.0.0.1");
      expect(port).not.toBe(8080);
    }
  }, 90_000);

  it("--help says what the viewers expose and to whom", async () => {
    const out: string[] = [];
    expect(await main(["inspect", "--help"], (line) => out.push(line))).toBe(0);
    const help = out.join("\n").replace(/\s+/g, " ");
    expect(help).toContain("--stately-relay [N]");
    expect(help).toContain("Off by default.");
    expect(help).toContain(
      "Both listen on 127.0.0.1 only, without authentication: they show every actor's events and context, " +
        "the agents' conversation text included, to any process on this machine",
    );
  });

  it.each(["--port", "--stately-relay"])("rejects a bad %s with one line, exit 2", async (flag) => {
    const err: string[] = [];
    const code = await main(
      ["inspect", flag, "70000"],
      () => {},
      (line) => err.push(line),
    );
    expect(code).toBe(2);
    expect(err).toEqual([
      `a2a-statecharts inspect: ${flag} must be a port number from 0 to 65535, got "70000" (see --help)`,
    ]);
  });
});

describe("a2a-statecharts inspect with its ports taken", () => {
  it("says which port is in use instead of crashing", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const address = taken.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    try {
      const err: string[] = [];
      const args = ["--exit", "--state-dir", stateDir()];
      const code = await main(
        ["inspect", "--port", "0", "--stately-relay", String(address.port), ...args],
        () => {},
        (line) => err.push(line),
      );
      expect(code).toBe(1);
      expect(err.join("\n")).toContain(
        `cannot run the @statelyai/inspect relay on 127.0.0.1:${address.port}: listen EADDRINUSE`,
      );
      const pageErr: string[] = [];
      const pageCode = await main(
        ["inspect", "--port", String(address.port), "--stately-relay", ...args],
        () => {},
        (line) => pageErr.push(line),
      );
      expect(pageCode).toBe(1);
      expect(pageErr.join("\n")).toContain(`cannot serve the page on 127.0.0.1:${address.port}`);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
