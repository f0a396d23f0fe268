// The errors a caller can catch: every error class of src/ extends A2AError with a code of its own, and
// every entry point exports the ones its calls throw as values (so `instanceof` works). That the public
// calls really throw them: errors.publicCalls.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { A2AError } from "../src/index.js";
import {
  ActorExistsError,
  ActorFailedError,
  ActorNotFoundError,
  ActorStoppedError,
} from "../src/durable/actorErrors.js";
import { DiscordError } from "../src/testing/emulator/errors.js";
import { ActorTakenOverError, InvalidActorRecordError } from "../src/persistence/actorRecord.js";
import { CorruptStateFileError, StateFileReadError } from "../src/persistence/DurableJsonFile.js";
import { CorruptSnapshotError } from "../src/persistence/recordLine.js";
import { StateDirNotFoundError } from "../src/persistence/readStateDir.js";
import { SnapshotStoreInUseError, SnapshotStoreNotOpenError } from "../src/persistence/SnapshotStorePort.js";
import {
  SnapshotStoreClosedError,
  SnapshotStoreWriteError,
} from "../src/persistence/snapshotStoreOptions.js";
import { ArchiveWriteError } from "../src/persistence/archive/ArchiveFiles.js";
import { StateDirLockedError, StateDirNotWritableError } from "../src/persistence/StateDirLock.js";
import { PostgresStoreError } from "../src/persistence/postgres/postgresErrors.js";
import { MachineInputError } from "../src/machines/MachineInputError.js";
import { MissingPortError } from "../src/runtime/MissingPortError.js";
import { DiscordCallTimeoutError } from "../src/runtime/discordCallTimeout.js";
import { A2AConfigError } from "../src/policies/config/parseConfig.js";
import { InvalidEventError } from "../src/policies/events/EventBus.js";
import { InvalidInputError } from "../src/policies/InvalidInputError.js";
import { RateLimiterClosedError } from "../src/policies/guards/RateLimiter.js";
import { UsageError } from "../src/cli/io.js";

const ROOT = resolve(import.meta.dirname, "..");

/** One instance of every error class in src/, made as its code makes it. */
const SAMPLES: Record<string, () => A2AError> = {
  A2AConfigError: () => new A2AConfigError([{ path: "discord", message: "bad" }]),
  ActorExistsError: () => new ActorExistsError("a", "DurableHost"),
  ActorFailedError: () => new ActorFailedError("a", "light", "DurableHost.spawn", new Error("broke")),
  ActorNotFoundError: () => new ActorNotFoundError("a", "DurableHost"),
  ActorStoppedError: () => new ActorStoppedError("a", "DurableHost stopped"),
  ActorTakenOverError: () => new ActorTakenOverError(["a"]),
  ArchiveWriteError: () => new ArchiveWriteError("archive/x.ndjson", new Error("EIO")),
  CorruptStateFileError: () => new CorruptStateFileError("x.json", "not JSON"),
  CorruptSnapshotError: () => new CorruptSnapshotError("actor-1", "Unexpected end of JSON input"),
  DiscordCallTimeoutError: () => new DiscordCallTimeoutError("sendMessage", 10_000),
  DiscordError: () => new DiscordError(404, 10003, "Unknown Channel"),
  InvalidActorRecordError: () => new InvalidActorRecordError("a", "no snapshot"),
  InvalidEventError: () => new InvalidEventError("invalid a2a.retry event"),
  InvalidInputError: () => new InvalidInputError("calculateBackoffMs", "attempt", "a whole number", -1),
  MachineInputError: () => new MachineInputError("mention", [{ path: "threadId", message: "required" }]),
  MissingPortError: () => new MissingPortError("sessionsSend", "gateway"),
  PostgresStoreError: () => new PostgresStoreError("cannot reach the server", "ECONNREFUSED"),
  RateLimiterClosedError: () => new RateLimiterClosedError("the rate limiter is closed"),
  SnapshotStoreClosedError: () => new SnapshotStoreClosedError("/tmp/s", "prune"),
  SnapshotStoreInUseError: () => new SnapshotStoreInUseError("memory store"),
  SnapshotStoreNotOpenError: () => new SnapshotStoreNotOpenError("memory store", "get"),
  SnapshotStoreWriteError: () => new SnapshotStoreWriteError([{ file: "x.json", cause: new Error("EIO") }]),
  StateDirLockedError: () => new StateDirLockedError("/tmp/s", 1, "/tmp/s/.lock"),
  StateDirNotFoundError: () => new StateDirNotFoundError("/tmp/s", "does not exist"),
  StateDirNotWritableError: () => new StateDirNotWritableError("/tmp/s", new Error("EACCES")),
  StateFileReadError: () => new StateFileReadError("x.json", new Error("EISDIR")),
  UsageError: () => new UsageError("--speed must be a number above 0"),
};

/** Every `class …Error` declared in src/, by name. */
function declaredErrorClasses(dir = join(ROOT, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declaredErrorClasses(path);
    if (!entry.name.endsWith(".ts")) return [];
    return [...readFileSync(path, "utf8").matchAll(/\bclass (\w+Error)\b/g)].map((m) => m[1] ?? "");
  });
}

/** `./dist/discord/index.js` → the source file of that entry point. */
function entryPoints(): Array<[string, string]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([entry, target]) =>
    typeof target === "object"
      ? [[entry, join(ROOT, target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"))]]
      : [],
  );
}

function isErrorClass(value: unknown): value is { prototype: unknown } {
  return typeof value === "function" && (value === Error || value.prototype instanceof Error);
}

describe("error classes", () => {
  it("every error class in src/ has a sample here (so the checks below cover it)", () => {
    expect(declaredErrorClasses().sort()).toEqual(["A2AError", ...Object.keys(SAMPLES)].sort());
  });

  it.each(Object.entries(SAMPLES))(
    "%s extends A2AError, with its own name and a stable code",
    (name, make) => {
      const error = make();
      expect(error).toBeInstanceOf(A2AError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(error.constructor.name).toBe(name);
      expect(error.code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(error.message).not.toBe("");
    },
  );

  it("no two classes share a code", () => {
    const codes = Object.values(SAMPLES).map((make) => make().code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("a cause is kept as the standard `cause`", () => {
    const cause = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    const error = new StateDirNotWritableError("/srv/a2a", cause);
    expect(error.cause).toBe(cause);
    expect(error.code).toBe("STATE_DIR_NOT_WRITABLE");
    expect(new PostgresStoreError("x", "28P01", { cause })).toMatchObject({ cause, causeCode: "28P01" });
  });
});

describe("entry points", () => {
  it.each(entryPoints())(
    "%s exports its error classes as A2AErrors with a sample here",
    async (_entry, file) => {
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module)) {
        if (!isErrorClass(value)) continue;
        const isA2AError = value === A2AError || value.prototype instanceof A2AError;
        expect({ name, isA2AError, sampled: name === "A2AError" || name in SAMPLES }).toEqual({
          name,
          isA2AError: true,
          sampled: true,
        });
      }
    },
  );

  it("each error a public call of an entry point throws is a value there", async () => {
    const exported = async (file: string) =>
      Object.keys((await import(pathToFileURL(join(ROOT, file)).href)) as Record<string, unknown>);
    expect(await exported("src/index.ts")).toEqual(
      expect.arrayContaining([
        "A2AError",
        "A2AConfigError",
        "InvalidInputError",
        "MachineInputError",
        "MissingPortError",
        "StateDirLockedError",
        "StateDirNotWritableError",
        "StateFileReadError",
        "SnapshotStoreInUseError",
        "SnapshotStoreWriteError",
        "ActorStoppedError",
      ]),
    );
    expect(await exported("src/durable/index.ts")).toEqual(
      expect.arrayContaining([
        "A2AError",
        "ActorExistsError",
        "ActorFailedError",
        "ActorNotFoundError",
        "ActorStoppedError",
        "InvalidActorRecordError",
        "SnapshotStoreInUseError",
        "SnapshotStoreNotOpenError",
        "SnapshotStoreWriteError",
        "StateDirLockedError",
        "StateDirNotWritableError",
      ]),
    );
    expect(await exported("src/persistence/postgres/index.ts")).toEqual(
      expect.arrayContaining([
        "PostgresStoreError",
        "ActorTakenOverError",
        "InvalidActorRecordError",
        "SnapshotStoreInUseError",
        "SnapshotStoreNotOpenError",
      ]),
    );
    expect(await exported("src/policies/entryPoint.ts")).toEqual(
      expect.arrayContaining(["InvalidInputError"]),
    );
    expect(await exported("src/testing/index.ts")).toEqual(expect.arrayContaining(["DiscordError"]));
  });
});
