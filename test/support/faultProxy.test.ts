// The fault proxy's modes with real sockets: a line-echo server made here with node:net, and a real
// PostgreSQL for resetAfterReply (the statement commits, the client only sees the connection die).
import { connect, createServer, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "./faultProxy.js";
import { usePostgres } from "./postgres.js";

/** One end of a connection: what it received, how it ended (the error code: ECONNRESET for a reset). */
class End {
  text = "";
  error: string | undefined;
  closed = false;
  constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (data: string) => (this.text += data));
    socket.on("error", (error: NodeJS.ErrnoException) => (this.error ??= error.code));
    socket.on("close", () => (this.closed = true));
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server echoing every byte back; `peers` are its ends of the connections, in order. */
async function startEcho(): Promise<{ port: number; peers: End[] }> {
  const peers: End[] = [];
  const server = createServer((socket) => {
    peers.push(new End(socket));
    socket.on("data", (data) => socket.write(data));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const peer of peers) peer.socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, peers };
}

async function proxyTo(port: number): Promise<FaultProxy> {
  const proxy = await startFaultProxy({ host: "127.0.0.1", port });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** Connects to the proxy; resolves once connected, or closed (a reset may come first). */
async function dial(proxy: FaultProxy): Promise<End> {
  const end = new End(connect(proxy.port, "127.0.0.1"));
  cleanups.push(() => end.socket.destroy());
  await new Promise<void>((resolve) => {
    end.socket.once("connect", resolve);
    end.socket.once("close", () => resolve());
  });
  return end;
}

async function until(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Real time for bytes to arrive if they were going to: used to show they did not. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/** A connection through the proxy, shown to echo "one\n" before the fault starts. */
async function echoing(proxy: FaultProxy, echo: { peers: End[] }): Promise<{ client: End; peer: End }> {
  const client = await dial(proxy);
  client.socket.write("one\n");
  await until(() => client.text === "one\n", "the echo of one");
  const peer = echo.peers.at(-1);
  if (peer === undefined) throw new Error("no server end");
  return { client, peer };
}

describe("startFaultProxy", { timeout: 20_000 }, () => {
  it("forwards both ways by default, passes a FIN on, and points a connection string at itself", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    expect(proxy.url("postgresql://user@127.0.0.1:5432/db?x=1")).toBe(
      `postgresql://user@127.0.0.1:${proxy.port}/db?x=1`,
    );
    const { client, peer } = await echoing(proxy, echo);
    expect(proxy.connections).toBe(1);
    client.socket.end();
    await until(() => client.closed && peer.closed && proxy.connections === 0, "a clean close");
    expect([client.error, peer.error]).toEqual([undefined, undefined]);
  });

  it("pause() holds every byte both ways, connections open; heal() delivers them in order", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const { client, peer } = await echoing(proxy, echo);
    proxy.pause();
    client.socket.write("two\n");
    peer.socket.write("push\n");
    await settle();
    client.socket.write("three\n");
    await settle();
    expect([client.text, peer.text]).toEqual(["one\n", "one\n"]);
    expect([client.closed, peer.closed, proxy.connections]).toEqual([false, false, 1]);
    proxy.heal();
    await until(() => client.text === "one\npush\ntwo\nthree\n", "the held bytes and their echo");
    expect(peer.text).toBe("one\ntwo\nthree\n");
  });

  it("a connection made while paused reaches the server only once healed, its bytes in order", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    proxy.pause();
    const client = await dial(proxy);
    client.socket.write("early\n");
    await settle();
    expect([echo.peers.length, client.closed, proxy.connections]).toEqual([0, false, 1]);
    proxy.heal();
    client.socket.write("late\n");
    await until(() => client.text === "early\nlate\n", "the echo of both lines");
    expect(echo.peers.length).toBe(1);
  });

  it("blackHole() drops every byte both ways, held ones too, connections open; after heal() new bytes flow", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const { client, peer } = await echoing(proxy, echo);
    proxy.pause();
    client.socket.write("held\n");
    await settle();
    proxy.blackHole();
    client.socket.write("lost-up\n");
    peer.socket.write("lost-down\n");
    await settle();
    expect([client.text, peer.text]).toEqual(["one\n", "one\n"]);
    expect([client.closed, peer.closed, proxy.connections]).toEqual([false, false, 1]);
    proxy.heal();
    client.socket.write("after\n");
    await until(() => client.text === "one\nafter\n", "the echo of after");
    expect(peer.text).toBe("one\nafter\n");
  });

  it("refuse() resets open connections and each new one, without dialing the server, until heal()", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const { client, peer } = await echoing(proxy, echo);
    proxy.refuse();
    await until(() => client.closed && peer.closed, "both ends of the open connection to close");
    expect([client.error, peer.error]).toEqual(["ECONNRESET", "ECONNRESET"]);

    const refused = await dial(proxy);
    refused.socket.write("hello?\n");
    await until(() => refused.closed, "the new connection to close");
    expect([refused.error, refused.text, echo.peers.length]).toEqual(["ECONNRESET", "", 1]);

    proxy.heal();
    await echoing(proxy, echo);
    expect(echo.peers.length).toBe(2);
  });

  it("resetAll() resets both sides of every open connection; new ones still work", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const a = await echoing(proxy, echo);
    const b = await echoing(proxy, echo);
    expect(proxy.connections).toBe(2);
    proxy.resetAll();
    const ends = [a.client, a.peer, b.client, b.peer];
    await until(() => ends.every((end) => end.closed), "every end to close");
    expect(ends.map((end) => end.error)).toEqual(Array(4).fill("ECONNRESET"));
    await until(() => proxy.connections === 0, "no connection left");
    await echoing(proxy, echo);
  });

  it("latency(ms) delays each direction by ms; a later chunk never overtakes an earlier one", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const { client, peer } = await echoing(proxy, echo);
    proxy.latency(100);
    let started = performance.now();
    client.socket.write("ping\n");
    await until(() => client.text === "one\nping\n", "the delayed echo");
    expect(performance.now() - started).toBeGreaterThanOrEqual(200); // there and back

    proxy.latency(300);
    started = performance.now();
    client.socket.write("slow\n");
    await new Promise((resolve) => setTimeout(resolve, 50)); // the proxy has queued it with 300 ms
    proxy.latency(0);
    client.socket.write("fast\n");
    await until(() => peer.text === "one\nping\nslow\nfast\n", "both at the server");
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("close() ends every connection and rejects a resetAfterReply() still waiting", async () => {
    const echo = await startEcho();
    const proxy = await proxyTo(echo.port);
    const { client, peer } = await echoing(proxy, echo);
    const waiting = proxy.resetAfterReply("never sent");
    await proxy.close();
    await expect(waiting).rejects.toThrow(/closed/);
    await until(() => client.closed && peer.closed, "both ends to close");
  });

  describe("against PostgreSQL", () => {
    const postgres = usePostgres();

    it("resetAfterReply(): the INSERT commits, yet its client only gets an error; it happens once", async () => {
      const url = await postgres().createDatabase();
      const direct = new pg.Client(url);
      await direct.connect();
      cleanups.push(() => direct.end());
      await direct.query("CREATE TABLE t (a int)");
      const proxy = await proxyTo(postgres().port);

      const client = new pg.Client(proxy.url(url));
      client.on("error", () => {}); // the reset also reaches the client as an 'error' event
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      const happened = proxy.resetAfterReply("INSERT INTO t");
      await expect(client.query("INSERT INTO t VALUES (1)")).rejects.toThrow();
      await happened;
      expect((await direct.query("SELECT a FROM t")).rows).toEqual([{ a: 1 }]);
      await until(() => proxy.connections === 0, "the reset connection to be gone");

      const again = new pg.Client(proxy.url(url));
      await again.connect();
      cleanups.push(() => again.end());
      await again.query("INSERT INTO t VALUES (2)");
      expect((await direct.query("SELECT a FROM t ORDER BY a")).rows).toEqual([{ a: 1 }, { a: 2 }]);
    });
  });
});
