import { A2AError } from "../../errors/A2AError.js";
import { errorCode, errorText } from "../DurableJsonFile.js";

/** The PostgreSQL store cannot start: the server, the credentials, the database or the permissions. */
export class PostgresStoreError extends A2AError {
  override readonly code = "POSTGRES_STORE_FAILED";
  override readonly name = "PostgresStoreError";

  constructor(
    message: string,
    /** The failure underneath's code, when it has one: PostgreSQL's SQLSTATE (`28P01`) or Node's (`ECONNREFUSED`). */
    readonly causeCode: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where a connection string points, without its password: `user@host:port/database`. */
export function describeTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const user = url.username === "" ? "" : `${decodeURIComponent(url.username)}@`;
    const host = url.hostname === "" ? (url.searchParams.get("host") ?? "localhost") : url.hostname;
    const port = url.port === "" ? "5432" : url.port;
    return `${user}${host}:${port}${url.pathname === "" ? "/" : decodeURIComponent(url.pathname)}`;
  } catch {
    // A key=value connection string: naming its parts would risk printing the password.
    return "the server in the connection string";
  }
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
]);

/** Whether an error means the server could not be reached or the connection broke (worth retrying). */
export function isConnectionError(error: unknown): boolean {
  // SQLSTATE class 08: connection exceptions; 57P01-03: the server is shutting down or starting.
  const code = codeOf(error) ?? "";
  if (UNREACHABLE.has(code) || code.startsWith("08") || /^57P0[1-3]$/.test(code)) return true;
  const text = errorText(error);
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(
    text,
  );
}

/** open()'s failure, or with `statementTimeoutMs` a status read's, saying what to fix (never the password). */
export function openFailure(
  error: unknown,
  o: { connectionString: string; schema: string; statementTimeoutMs?: number },
): PostgresStoreError {
  const target = describeTarget(o.connectionString);
  const code = codeOf(error);
  const detail = errorText(error);
  const reading = o.statementTimeoutMs !== undefined;
  const say = (what: string) =>
    new PostgresStoreError(`PostgreSQL store (${target}): ${what}`, code, { cause: error });
  // A read's own findings (a schema without the store's tables) are told with the target.
  if (error instanceof PostgresStoreError) return reading && code === undefined ? say(error.message) : error;
  switch (code) {
    case "28P01":
    case "28000":
      return say(
        `the server refused the credentials (${detail}): check the user and password in the connection string, and pg_hba.conf`,
      );
    case "3D000":
      return say(`${detail}: create it (createdb) or name an existing database in the connection string`);
    case "42501":
      return say(
        reading
          ? `permission denied (${detail}): reading the store needs USAGE on schema "${o.schema}" and SELECT on its tables`
          : `permission denied (${detail}): the user needs CREATE on the database (to create schema "${o.schema}") or USAGE and CREATE on that schema`,
      );
    case "57014":
      if (reading)
        return say(
          `a query ran longer than ${o.statementTimeoutMs} ms and was cancelled: the server is overloaded, or a transaction holds a lock on the store's tables`,
        );
      break;
    case "57P03":
      return say(
        `the server is starting up or shutting down (${detail}): try again once it accepts connections`,
      );
  }
  if (isConnectionError(error)) {
    return say(
      `cannot reach the server (${code ?? detail}): is PostgreSQL running there, and is the connection string right?`,
    );
  }
  return say(`${reading ? "reading the store" : "open"} failed: ${detail}`);
}

export function codeOf(error: unknown): string | undefined {
  return error instanceof PostgresStoreError ? error.causeCode : errorCode(error);
}
