import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type A2ALogger,
  type A2ARuntime,
  type A2ARuntimeOptions,
  createA2ARuntime,
} from "../../src/index.js";
import { runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";

// The runtime logs through `logger` (pino's shape: fields first, then the message), by level; without
// one, warnings go to the console.

const started: A2ARuntime[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) await r.stop();
  vi.restoreAllMocks();
});

// A key of earlier configurations: it loads with a warning (its type does not know it).
const warningConfig = {
  ...runtimeConfig,
  discord: { ...runtimeConfig.discord, a2aRetry: { checkIntervalMs: 60_000 } },
} as A2ARuntimeOptions["config"];

async function start(o: Partial<A2ARuntimeOptions>): Promise<A2ARuntime> {
  const r = createA2ARuntime({ stateDir: tempStateDir(), config: warningConfig, ...o });
  started.push(r);
  await r.start();
  return r;
}

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push({ level, fields, message });
  const logger: A2ALogger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
}

describe("createA2ARuntime({ logger })", () => {
  it("gets warnings and the start with structured fields, in pino's argument order", async () => {
    const { logger, lines } = recordingLogger();
    const stateDir = tempStateDir();
    const r = createA2ARuntime({ stateDir, config: warningConfig, logger });
    started.push(r);
    await r.start();
    expect(lines).toContainEqual({
      level: "warn",
      fields: {},
      message: expect.stringMatching(/^config key discord\.a2aRetry\.checkIntervalMs is ignored/),
    });
    expect(lines).toContainEqual({
      level: "info",
      fields: { stateDir: expect.stringContaining(stateDir), live: 0, dormant: 0, timersPending: 0 },
      message: "started",
    });
  });

  it("a level logs to the console from that level up", async () => {
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await start({ logger: "info" });
    expect(info).toHaveBeenCalledWith(expect.stringMatching(/^a2a-statecharts: started \{"stateDir":/));
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("checkIntervalMs is ignored"));
    expect(debug).not.toHaveBeenCalled();
  });

  it("by default, warnings go to console.warn and nothing else is printed", async () => {
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await start({});
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/^a2a-statecharts: config key .*checkIntervalMs/),
    );
    expect(info).not.toHaveBeenCalled();
  });

  it("refuses a logger that lacks a level, or an unknown level, naming it", () => {
    const { logger } = recordingLogger();
    const { error: _error, ...noError } = logger;
    expect(() => createA2ARuntime({ logger: noError as A2ALogger })).toThrow(
      "createA2ARuntime: logger.error must be a function (a pino logger fits)",
    );
    expect(() => createA2ARuntime({ logger: "verbose" as "info" })).toThrow(
      'createA2ARuntime: logger must be a logger or one of debug, info, warn, error, got "verbose"',
    );
  });
});
