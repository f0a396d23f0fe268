// The emulator's record of REST exchanges (the `recordExchanges` option): what each request sent and
// what it was answered, in the order the answers were written.
import type { IncomingMessage, ServerResponse } from "node:http";

/** One REST request the emulator answered, and its answer. */
export interface RestExchange {
  /** HTTP method, upper case. */
  method: string;
  /** The path after `/api/v10` (the whole path for a request outside it), without the query. */
  path: string;
  /** Query parameters (the last value of a repeated one). */
  query: Record<string, string>;
  status: number;
  /** The parsed JSON body the client sent; the raw text when it was not JSON; absent when empty. */
  requestBody?: unknown;
  /** The parsed JSON body of the answer; absent when it had none (204). */
  responseBody?: unknown;
}

const API_PREFIX = "/api/v10";

function parsed(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Appends the exchange to `sink` when `res` is ended. It taps the request's data alongside the REST
 * handler and wraps `res.end`, so the handler itself stays unaware of the recording; an exchange is
 * pushed before its answer is written, so a client that got the answer finds it recorded.
 */
export function recordExchange(req: IncomingMessage, res: ServerResponse, sink: RestExchange[]): void {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  let path = url.pathname.startsWith(`${API_PREFIX}/`) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the raw path, as the REST handler does
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  const end = res.end;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const [chunk] = args;
    const requestBody = parsed(Buffer.concat(chunks).toString("utf8"));
    const responseBody =
      typeof chunk === "string" || Buffer.isBuffer(chunk) ? parsed(chunk.toString()) : undefined;
    sink.push({
      method: (req.method ?? "GET").toUpperCase(),
      path,
      query: Object.fromEntries(url.searchParams),
      status: res.statusCode,
      ...(requestBody === undefined ? {} : { requestBody }),
      ...(responseBody === undefined ? {} : { responseBody }),
    });
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse["end"];
}
