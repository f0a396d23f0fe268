/** A log line's structured fields, beside its message. */
export type LogFields = Record<string, unknown>;

/** Where the runtime logs: pino's shape (`logger.warn({ stateDir }, "…")`), so a pino logger fits. */
export interface A2ALogger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

/** A log level, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** The console from `level` up: `a2a-statecharts: message {fields}`. */
function consoleLogger(level: LogLevel): A2ALogger {
  const from = LEVELS.indexOf(level);
  const line = (at: LogLevel) => (fields: LogFields, message: string) => {
    if (LEVELS.indexOf(at) < from) return;
    const shown = Object.keys(fields).length === 0 ? "" : ` ${safeJson(fields)}`;
    console[at](`a2a-statecharts: ${message}${shown}`);
  };
  const logger = {} as A2ALogger;
  for (const at of LEVELS) logger[at] = line(at);
  return logger;
}

/** The runtime's logger: `logger` (a level is the console from that level up), else the console at warn. */
export function runtimeLogger(o: { logger?: A2ALogger | LogLevel }): A2ALogger {
  if (typeof o.logger === "string") {
    if (!LEVELS.includes(o.logger)) {
      throw new TypeError(
        `createA2ARuntime: logger must be a logger or one of ${LEVELS.join(", ")}, got ${JSON.stringify(o.logger)}`,
      );
    }
    return consoleLogger(o.logger);
  }
  if (o.logger !== undefined) {
    for (const level of LEVELS) {
      if (typeof o.logger[level] !== "function") {
        throw new TypeError(`createA2ARuntime: logger.${level} must be a function (a pino logger fits)`);
      }
    }
    return o.logger;
  }
  return consoleLogger("warn");
}

/** A logger that hands each warning and error to `write` as its text (without the fields), and drops the rest. */
export function textLogger(write: (message: string) => void): A2ALogger {
  return { debug: () => {}, info: () => {}, warn: (_f, m) => write(m), error: (_f, m) => write(m) };
}

function safeJson(fields: LogFields): string {
  try {
    return JSON.stringify(fields);
  } catch {
    return "{…}";
  }
}
