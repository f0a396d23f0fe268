import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { InspectionEvent } from "xstate";
import { InspectorModel } from "./InspectorModel.js";
import { hostOf, isLoopback } from "./loopback.js";
import { pageFile } from "./pageFiles.js";
import type { InspectorMessage } from "./protocol.js";

/** A live statechart inspector on 127.0.0.1: open `url` in a browser. */
export interface InspectorServer {
  /** The page, e.g. `http://127.0.0.1:PORT/`. */
  url: string;
  /** Pass as `createA2ARuntime({ inspect })`: hears every actor, snapshot and event. Never throws. */
  inspect: (event: InspectionEvent) => void;
  close(): Promise<void>;
}

/** A page that reads slower than this much buffered output is disconnected (its EventSource reconnects). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const KEEPALIVE_MS = 15_000;

const SECURITY_HEADERS = {
  // Nothing from outside this server: scripts and data from 'self' only (Mermaid's SVG needs inline styles).
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/**
 * Serves the inspector: the page, `/events` (Server-Sent Events: the state, then each change) and
 * `/state.json`. Loopback only, and only requests addressed to one, against DNS rebinding.
 */
export async function startInspectorServer(
  o: { port?: number; host?: string } = {},
): Promise<InspectorServer> {
  const host = o.host ?? "127.0.0.1";
  if (!isLoopback(host)) {
    throw new TypeError(
      `startInspectorServer: host must be a loopback address (127.0.0.1, ::1), got ${host}`,
    );
  }
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new TypeError(`startInspectorServer: port must be a whole number from 0 to 65535, got ${port}`);
  }

  const clients = new Set<ServerResponse>();
  const send = (res: ServerResponse, message: InspectorMessage): void => {
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      clients.delete(res);
      res.destroy();
      return;
    }
    res.write(`data: ${JSON.stringify(message)}\n\n`);
  };
  const model = new InspectorModel((message) => {
    for (const res of clients) send(res, message);
  });

  const respond = (res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8") => {
    res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": type });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!isLoopback(hostOf(req.headers.host))) {
      return respond(res, 403, "the inspector answers loopback addresses only\n");
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return respond(res, 405, "method not allowed\n");
    }
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    switch (path) {
      case "/state.json":
        return respond(res, 200, JSON.stringify(model.hello()), "application/json");
      case "/events": {
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          "Content-Type": "text/event-stream; charset=utf-8",
          Connection: "keep-alive",
        });
        res.write("retry: 1000\n\n");
        send(res, model.hello());
        clients.add(res);
        res.on("close", () => clients.delete(res));
        return;
      }
      default:
        return void serveFile(req, res, path);
    }
  };

  // A gzipped file goes as it is to a browser (every one takes gzip), inflated to anything else.
  const serveFile = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    let file;
    try {
      file = await pageFile(path);
    } catch (error) {
      return respond(res, 500, `${(error as Error).message}\n`);
    }
    if (file === undefined) return respond(res, 404, "not found\n");
    const gzipped = file.gzipped === true && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
    const body = file.gzipped && !gzipped ? await promisify(gunzip)(file.body) : file.body;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": file.type,
      "Content-Length": Buffer.byteLength(body),
      ...(file.gzipped ? { Vary: "Accept-Encoding" } : {}),
      ...(gzipped ? { "Content-Encoding": "gzip" } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const keepalive = setInterval(() => {
    for (const res of clients) res.write(": keepalive\n\n");
  }, KEEPALIVE_MS);
  keepalive.unref();

  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${shown}:${address.port}/`,
    inspect: (event) => {
      try {
        model.handle(event);
      } catch {
        // An inspector must never break the actors it watches.
      }
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        clearInterval(keepalive);
        for (const res of clients) res.end();
        clients.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
