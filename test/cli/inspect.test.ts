import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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

describe("a2a-statecharts inspect", () => {
  it("runs the demo with the offline page and the @statelyai/inspect relay both receiving its actors", async () => {
    const statelyPort = await freePort();
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
        "--stately-port",
        String(statelyPort),
        "--speed",
        "200",
        "--state-dir",
        join(tempDir("a2a-inspect-"), "state"),
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
        if (pageUrl !== undefined && pageState === undefined && /^ {2}\+[\d:.]+ {2}✔ /.test(line)) {
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
  }, 90_000);

  it("rejects a bad port with one line, exit 2", async () => {
    const err: string[] = [];
    const code = await main(
      ["inspect", "--port", "70000"],
      () => {},
      (line) => err.push(line),
    );
    expect(code).toBe(2);
    expect(err).toEqual([
      'a2a-statecharts inspect: --port must be a port number from 0 to 65535, got "70000" (see --help)',
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
      const args = ["--exit", "--state-dir", join(tempDir("a2a-inspect-"), "state")];
      const code = await main(
        ["inspect", "--port", "0", "--stately-port", String(address.port), ...args],
        () => {},
        (line) => err.push(line),
      );
      expect(code).toBe(1);
      expect(err.join("\n")).toContain(`port ${address.port} is in use; pass --stately-port`);
      const pageErr: string[] = [];
      const pageCode = await main(
        ["inspect", "--port", String(address.port), "--stately-port", "0", ...args],
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
