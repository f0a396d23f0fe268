/**
 * A fault-injecting TCP proxy on 127.0.0.1 for tests of a PostgreSQL client under network faults: the
 * client connects to the proxy, the proxy to the real server, and the test changes what the "network"
 * in between does (hold, drop, refuse, delay, reset) without touching either end.
 *
 *   const proxy = await startFaultProxy({ host: server.host, port: server.port });
 *   const client = new pg.Client(proxy.url(server.connectionString()));
 *   proxy.pause(); ... proxy.heal();
 *   await proxy.close();
 *
 * Every chunk goes through a per-direction queue, whatever the mode, so bytes are never reordered:
 * held bytes flow in order on heal(), and a chunk delayed by latency() holds back those behind it.
 */
import { connect, createServer, type Socket } from "node:net";
import { performance } from "node:perf_hooks";

export interface FaultProxy {
  /** Where clients connect (127.0.0.1). */
  readonly port: number;
  /** Rewrites a postgresql:// URL to the proxy: port, and host 127.0.0.1 (the only address it listens on). */
  url(connectionString: string): string;
  /** Forward normally (the default). Chunks already delayed by latency() keep their time. */
  heal(): void;
  /**
   * Hold every byte both ways (connections stay open, nothing is delivered) until heal(); then the held
   * bytes flow in order. A connection made meanwhile reaches the server only then: a server waits for
   * a new connection's first packet, and one shutting down waits for it to end.
   */
  pause(): void;
  /** Drop every byte both ways silently, held ones included, connections stay open (a host gone dark); after heal() new bytes flow again but the dropped ones are gone. */
  blackHole(): void;
  /** New connections are closed at once (RST), existing ones are reset too; until heal(). */
  refuse(): void;
  /** Delay every chunk by ms in each direction, order kept (a later chunk never overtakes an earlier one). */
  latency(ms: number): void;
  /** Resets every open connection now (RST both sides); the mode stays. */
  resetAll(): void;
  /**
   * Once: when a client→server chunk contains `marker` (a SQL text fragment), that chunk is forwarded;
   * the server's next reply on that connection is dropped and both sides are reset. So the server
   * executes (and commits, for an autocommit statement) but the client never learns the outcome.
   * Resolves when it has happened. The marker must sit within one chunk (a statement of one message does).
   */
  resetAfterReply(marker: string): Promise<void>;
  /** Open client connections now. */
  readonly connections: number;
  /** Destroys every socket and stops listening; a pending resetAfterReply() rejects. */
  close(): Promise<void>;
}

type Mode = "forward" | "pause" | "blackHole" | "refuse";

/** One direction of one connection. `chunk: null` is the sender's FIN, queued so it stays behind its data. */
interface Pipe {
  to: Socket;
  queue: { chunk: Buffer | null; due: number }[];
  timer: NodeJS.Timeout | undefined;
}

interface Link {
  client: Socket;
  server: Socket;
  up: Pipe;
  down: Pipe;
  /** Set by resetAfterReply's marker: the server's next chunk is dropped and the link cut. */
  dropNextReply?: () => void;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let mode: Mode = "forward";
  let delay = 0;
  let armed: { marker: string; fired: () => void; fail: (error: Error) => void } | undefined;
  const links = new Set<Link>();
  /** Client connections made while paused, not yet read: linked to the server on heal(). */
  const held = new Set<Socket>();

  const rst = (socket: Socket) => {
    if (socket.destroyed) return;
    // resetAndDestroy() on a socket still connecting waits for the connect: there is no peer to reset yet.
    if (socket.connecting) socket.destroy();
    else socket.resetAndDestroy();
  };
  const drop = (pipe: Pipe) => {
    clearTimeout(pipe.timer);
    pipe.timer = undefined;
    pipe.queue.length = 0;
  };
  const cut = (link: Link) => {
    drop(link.up);
    drop(link.down);
    rst(link.client);
    rst(link.server);
  };

  /** Delivers the queue's due chunks in order; a timer for the first one not yet due. */
  const pump = (pipe: Pipe) => {
    clearTimeout(pipe.timer);
    pipe.timer = undefined;
    if (mode === "pause") return;
    for (let head = pipe.queue[0]; head !== undefined; head = pipe.queue[0]) {
      // Timers may fire a little early: the check is against performance.now(), re-armed if so.
      const wait = head.due - performance.now();
      if (wait > 0) {
        pipe.timer = setTimeout(() => pump(pipe), Math.ceil(wait));
        return;
      }
      pipe.queue.shift();
      if (pipe.to.destroyed) continue;
      if (head.chunk === null) pipe.to.end();
      else pipe.to.write(head.chunk);
    }
  };
  const pumpAll = () => {
    for (const link of links) for (const pipe of [link.up, link.down]) pump(pipe);
  };
  const enqueue = (pipe: Pipe, chunk: Buffer | null) => {
    if (mode === "blackHole") return; // a dark host: nothing arrives, not even a FIN
    pipe.queue.push({ chunk, due: performance.now() + delay });
    if (pipe.timer === undefined) pump(pipe);
  };

  const server = createServer({ allowHalfOpen: true }, (client) => {
    client.on("error", () => {}); // resets are the point here; 'close' handles them
    if (mode === "refuse") return rst(client);
    if (mode === "pause") {
      client.pause();
      held.add(client);
      client.on("close", () => held.delete(client));
      return;
    }
    link(client);
  });
  const releaseHeld = () => {
    for (const client of held) {
      link(client);
      client.resume();
    }
    held.clear();
  };
  const link = (client: Socket) => {
    // allowHalfOpen: a FIN is forwarded through the queue (after the data before it), not acted on at once.
    const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    upstream.on("error", () => {});
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const pipe = (to: Socket): Pipe => ({ to, queue: [], timer: undefined });
    const link: Link = { client, server: upstream, up: pipe(upstream), down: pipe(client) };
    links.add(link);
    client.on("data", (chunk: Buffer) => {
      if (armed !== undefined && mode !== "blackHole" && chunk.includes(armed.marker)) {
        link.dropNextReply = armed.fired;
        armed = undefined;
      }
      enqueue(link.up, chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      const fired = link.dropNextReply;
      if (fired === undefined) return enqueue(link.down, chunk);
      link.dropNextReply = undefined;
      cut(link);
      fired();
    });
    client.on("end", () => enqueue(link.up, null));
    upstream.on("end", () => enqueue(link.down, null));
    let open = 2;
    const closed = (hadError: boolean) => {
      if (hadError) cut(link); // one side reset or failed (e.g. the server refused): so is the other
      if (--open === 0) links.delete(link);
    };
    client.on("close", closed);
    upstream.on("close", closed);
  };
  server.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fault proxy: no TCP address");

  return {
    port: address.port,
    url(connectionString) {
      const url = new URL(connectionString);
      url.hostname = "127.0.0.1";
      url.port = String(address.port);
      return url.toString();
    },
    heal() {
      mode = "forward";
      delay = 0;
      pumpAll();
      releaseHeld();
    },
    pause() {
      mode = "pause";
    },
    blackHole() {
      mode = "blackHole";
      for (const link of links) [link.up, link.down].forEach(drop);
    },
    refuse() {
      mode = "refuse";
      for (const link of links) cut(link);
      for (const client of held) rst(client);
    },
    latency(ms) {
      mode = "forward";
      delay = ms;
      pumpAll();
      releaseHeld();
    },
    resetAll() {
      for (const link of links) cut(link);
      for (const client of held) rst(client);
    },
    resetAfterReply(marker) {
      if (armed !== undefined) return Promise.reject(new Error("fault proxy: resetAfterReply already armed"));
      const happened = new Promise<void>((resolve, reject) => {
        armed = { marker, fired: resolve, fail: reject };
      });
      happened.catch(() => {}); // close()'s rejection reaches an awaiting test, never an unhandled one
      return happened;
    },
    get connections() {
      return [...links].filter((link) => !link.client.destroyed).length + held.size;
    },
    async close() {
      armed?.fail(new Error("fault proxy closed before resetAfterReply's marker was seen"));
      armed = undefined;
      mode = "refuse";
      for (const link of links) {
        drop(link.up);
        drop(link.down);
        link.client.destroy();
        link.server.destroy();
      }
      for (const client of held) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
