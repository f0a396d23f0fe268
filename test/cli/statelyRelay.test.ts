import { request } from "node:http";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type StatelyRelay, startStatelyRelay } from "../../src/cli/StatelyRelay.js";
import { refusedFromNetwork } from "../support/loopbackOnly.js";

let relay: StatelyRelay | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await relay?.close();
  relay = undefined;
});

/** A client with every message it receives, from the first (a replay may arrive with the handshake). */
interface Client {
  socket: WebSocket;
  next(): Promise<string>;
}

function open(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const socket = new WebSocket(url, { headers });
  sockets.push(socket);
  const received: string[] = [];
  const waiting: Array<(message: string) => void> = [];
  socket.on("message", (data: Buffer) => {
    const take = waiting.shift();
    if (take === undefined) received.push(data.toString());
    else take(data.toString());
  });
  const next = () => {
    const message = received.shift();
    return message === undefined
      ? new Promise<string>((resolve) => waiting.push(resolve))
      : Promise.resolve(message);
  };
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ socket, next }));
    socket.once("error", reject);
  });
}

function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: host === undefined ? {} : { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the @statelyai/inspect relay", () => {
  it("listens on 127.0.0.1 only: a non-loopback address of this machine is refused", async () => {
    relay = await startStatelyRelay({ port: 0 });
    expect(relay.url).toBe(`http://127.0.0.1:${relay.port}`);
    expect(relay.wsUrl).toBe(`ws://127.0.0.1:${relay.port}`);
    // Not false: refused, or the machine has no other address to try.
    expect(await refusedFromNetwork(relay.port)).not.toBe(false);
  });

  it("forwards what the app sends to the page, replaying what came before the page connected", async () => {
    relay = await startStatelyRelay({ port: 0 });
    const app = await open(relay.wsUrl);
    app.socket.send('{"type":"@xstate.actor","n":1}');
    // A first listener proves the relay has the message before the page arrives.
    const early = await open(relay.wsUrl);
    expect(await early.next()).toBe('{"type":"@xstate.actor","n":1}');
    const page = await open(relay.wsUrl, { origin: `http://127.0.0.1:${relay.port}` });
    expect(await page.next()).toBe('{"type":"@xstate.actor","n":1}');
    app.socket.send('{"type":"@xstate.event","n":2}');
    expect(await page.next()).toBe('{"type":"@xstate.event","n":2}');
    expect(await early.next()).toBe('{"type":"@xstate.event","n":2}');
  });

  it("serves a page that listens on 127.0.0.1 and posts to Stately's frame only", async () => {
    relay = await startStatelyRelay({ port: 0 });
    const page = await get(relay.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`new WebSocket('ws://127.0.0.1:${relay.port}')`);
    expect(page.body).toContain("postMessage(data, 'https://stately.ai')");
    expect(page.body).not.toContain("'*'");
  });

  it("refuses web pages of other sites and requests addressed to another host name (DNS rebinding)", async () => {
    relay = await startStatelyRelay({ port: 0 });
    await expect(open(relay.wsUrl, { origin: "https://evil.example" })).rejects.toThrow(/403/);
    await expect(open(relay.wsUrl, { host: `evil.example:${relay.port}` })).rejects.toThrow(/403/);
    expect((await get(relay.url, `evil.example:${relay.port}`)).status).toBe(403);
    await expect(open(relay.wsUrl, { origin: `http://localhost:${relay.port}` })).resolves.toBeDefined();
  });

  it("rejects when its port is taken, instead of crashing the process", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    try {
      await expect(startStatelyRelay({ port: address.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
