import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { hostOf, isLoopback } from "../inspector/loopback.js";

/**
 * The relay to Stately's inspector (https://stately.ai/inspect): a page embedding it, and a WebSocket
 * forwarding each client's messages to the others, replaying the latest to a newcomer. It is
 * `createInspectorServer` of `@statelyai/inspect/server` (0.7), which listens on every interface
 * without authentication; this one listens on 127.0.0.1, answers loopback names only (no DNS
 * rebinding) and refuses WebSockets from other pages, so only this machine reads the stream.
 */
export interface StatelyRelay {
  /** The page to open, `http://127.0.0.1:PORT`. */
  url: string;
  /** The WebSocket to pass to `createWebSocketInspector({ url })`, `ws://127.0.0.1:PORT`. */
  wsUrl: string;
  port: number;
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const INSPECTOR_URL = "https://stately.ai/inspect";
// The messages carry conversation text: they go to Stately's frame only, whatever it navigates to.
const INSPECTOR_ORIGIN = new URL(INSPECTOR_URL).origin;
/** As many messages as `createInspectorServer` replays to a page that connects late. */
const REPLAYED = 200;

/** Starts the relay on 127.0.0.1:`port` (0 picks a free port); rejects when the port is taken. */
export async function startStatelyRelay(o: { port: number }): Promise<StatelyRelay> {
  let port = o.port;
  const fromHere = (req: IncomingMessage) => isLoopback(hostOf(req.headers.host));
  const server = createServer((req, res) => {
    if (!fromHere(req)) {
      res.writeHead(403, { "Content-Type": "text/plain; charset=utf-8" }).end("loopback addresses only\n");
      return;
    }
    res
      .writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" })
      .end(bridgePage(port));
  });
  const sockets = new WebSocketServer({
    server,
    // A process sends no Origin; a browser does, and only the relay's own page may listen.
    verifyClient: (
      { req, origin }: { req: IncomingMessage; origin: string | undefined },
      answer: (allowed: boolean, code?: number) => void,
    ) => answer(fromHere(req) && (origin === undefined || isLoopback(originHost(origin))), 403),
  });
  // ws repeats the HTTP server's errors here; a failed listen is reported by the promise below.
  sockets.on("error", () => {});
  const replay: string[] = [];
  sockets.on("connection", (socket) => {
    for (const message of replay) socket.send(message);
    socket.on("message", (data: Buffer) => {
      const message = data.toString();
      replay.push(message);
      if (replay.length > REPLAYED) replay.shift();
      for (const client of sockets.clients) {
        if (client !== socket && client.readyState === WebSocket.OPEN) client.send(message);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${port}`,
    wsUrl: `ws://${HOST}:${port}`,
    port,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function originHost(origin: string): string {
  try {
    return new URL(origin).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return "";
  }
}

/** The page of `createInspectorServer`, connecting to 127.0.0.1 rather than `localhost` (which may be ::1). */
function bridgePage(port: number): string {
  return `<!DOCTYPE html>
<html>
<head>
  <title>Stately Inspector</title>
  <style>* { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }</style>
</head>
<body>
  <iframe id="inspector" src="${INSPECTOR_URL}"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        buffer.forEach((event) => iframe.contentWindow.postMessage(event, '${INSPECTOR_ORIGIN}'));
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://${HOST}:${port}');
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '${INSPECTOR_ORIGIN}');
      else buffer.push(data);
    };
  </script>
</body>
</html>`;
}
