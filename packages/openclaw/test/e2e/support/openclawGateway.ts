// A real OpenClaw gateway for the end-to-end tests: Node 24 and openclaw as scripts/openclaw-install.mjs
// installs them, an isolated home (its own config, state and workspaces), Discord pointed at the
// emulator and the model at the fake model. Started as a process group, so a SIGKILL takes the whole
// gateway down as a crash would.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
// @ts-expect-error: a plain .mjs script without types
import { installOpenClaw } from "../../../../../scripts/openclaw-install.mjs";

const exec = promisify(execFile);

export interface OpenClawPaths {
  node: string;
  nodeBin: string;
  openclaw: string;
}

/** Node 24 and OpenClaw, installed on first use (about a minute) and cached in node_modules/.cache. */
export async function openclawInstalled(): Promise<OpenClawPaths> {
  return (await installOpenClaw()) as OpenClawPaths;
}

export interface GatewayOptions {
  paths: OpenClawPaths;
  /** The folder the gateway's home, state, config and logs live in. */
  dir: string;
  port: number;
  /** More environment for the gateway (the secrets its config refers to). */
  env?: Record<string, string>;
  /** OpenClaw's DISCORD_API_URL: the emulator's `apiBaseUrl` (REST v10 on the gateway's origin). */
  discordApiUrl: string;
}

/** One isolated OpenClaw home, and the gateway process run in it. */
export class OpenClawGateway {
  readonly configPath: string;
  readonly logPath: string;
  readonly stateDir: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private runs = 0;

  constructor(private readonly o: GatewayOptions) {
    this.configPath = join(o.dir, "openclaw.json");
    this.stateDir = join(o.dir, "state");
    this.logPath = join(o.dir, "gateway.log");
    mkdirSync(join(o.dir, "home"), { recursive: true });
    mkdirSync(join(o.dir, "tmp"), { recursive: true });
    mkdirSync(this.stateDir, { recursive: true });
  }

  /** The environment of every openclaw command: nothing read from or written to the real home. */
  env(): NodeJS.ProcessEnv {
    // The gateway runs as a user runs it: OpenClaw changes its behaviour under vitest's variables
    // (VITEST, TEST, NODE_ENV=test: no console log, among others).
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(VITEST|TEST$|NODE_ENV$|npm_)/.test(name)),
    );
    return {
      ...inherited,
      PATH: `${this.o.paths.nodeBin}:${process.env.PATH ?? ""}`,
      OPENCLAW_HOME: join(this.o.dir, "home"),
      OPENCLAW_STATE_DIR: this.stateDir,
      OPENCLAW_CONFIG_PATH: this.configPath,
      OPENCLAW_OFFLINE: "1",
      OPENCLAW_NO_AUTO_UPDATE: "1",
      OPENCLAW_DISABLE_BONJOUR: "1",
      DISCORD_API_URL: this.o.discordApiUrl,
      // OpenClaw's scratch files (and Node's compile cache) go with this home, not the test run's tmp.
      TMPDIR: join(this.o.dir, "tmp"),
      ...this.o.env,
    };
  }

  writeConfig(config: unknown): void {
    writeFileSync(this.configPath, `${JSON.stringify(config, null, 2)}\n`);
  }

  readConfig(): Record<string, unknown> {
    return JSON.parse(readFileSync(this.configPath, "utf8")) as Record<string, unknown>;
  }

  /** Runs `openclaw <args>` in this home to its end. */
  async cli(args: string[], timeoutMs = 180_000): Promise<{ stdout: string; stderr: string }> {
    return exec(this.o.paths.node, [this.o.paths.openclaw, ...args], {
      env: this.env(),
      cwd: this.o.dir,
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
  }

  /** Starts `openclaw gateway run`; its output goes to the log file (appended across restarts). */
  start(): void {
    if (this.child !== undefined) throw new Error("the gateway is running already");
    this.runs += 1;
    const log = createWriteStream(this.logPath, { flags: "a" });
    log.write(`\n===== gateway run ${this.runs} =====\n`);
    const child = spawn(
      this.o.paths.node,
      [this.o.paths.openclaw, "gateway", "run", "--allow-unconfigured", "--port", String(this.o.port)],
      { env: this.env(), cwd: this.o.dir, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    this.child = child;
    this.exited = new Promise((resolve) =>
      child.once("exit", () => {
        log.end();
        resolve();
      }),
    );
  }

  /** The gateway's log so far. */
  log(): string {
    try {
      return readFileSync(this.logPath, "utf8");
    } catch {
      return "";
    }
  }

  /** Waits until the log of the current run matches `pattern`; fails with the log's tail if it does not. */
  async waitForLog(pattern: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = this.log().split(`===== gateway run ${this.runs} =====`).pop() ?? "";
      if (pattern.test(current)) return;
      if (this.child === undefined || this.child.exitCode !== null)
        throw new Error(`the gateway exited before ${pattern}:\n${current.slice(-4000)}`);
      if (Date.now() > deadline)
        throw new Error(`no ${pattern} in the gateway's log after ${timeoutMs} ms:\n${current.slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Kills the whole process group: SIGKILL is a crash; SIGTERM a clean stop (SIGKILL after 20 s). */
  async kill(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
    const child = this.child;
    if (child === undefined || child.pid === undefined) return;
    const group = -child.pid;
    try {
      process.kill(group, signal);
    } catch {
      // already gone
    }
    const timer =
      signal === "SIGTERM"
        ? setTimeout(() => {
            try {
              process.kill(group, "SIGKILL");
            } catch {
              // already gone
            }
          }, 20_000)
        : undefined;
    await this.exited;
    clearTimeout(timer);
    // What the group left (a helper process) goes with it.
    try {
      process.kill(group, "SIGKILL");
    } catch {
      // nothing left
    }
    this.child = undefined;
  }
}
