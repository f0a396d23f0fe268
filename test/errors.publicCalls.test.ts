// Each error class an entry point exports is what its public call really throws: the runtime's start(),
// stop() and a call cut short by a stop; the durable host's spawn and send; the lowdb store's open and
// close; the emulator's postAsUser. (MissingPortError, StateDirLockedError, SnapshotStoreNotOpenError,
// InvalidActorRecordError, MachineInputError and PostgresStoreError have their own tests beside their
// callers.)
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import {
  ActorStoppedError,
  SnapshotStoreInUseError,
  SnapshotStoreWriteError,
  StateDirNotWritableError,
  StateFileReadError,
} from "../src/index.js";
import {
  ActorExistsError,
  ActorFailedError,
  ActorNotFoundError,
  createDurableHost,
  createLowdbStore,
  createMemoryStore,
  type ActorRecord,
  type DurableHost,
  type SnapshotStoreOpenOptions,
} from "../src/durable/index.js";
import { DiscordError, ScriptedGateway, startDiscordEmulator } from "../src/testing/index.js";
import { tempStateDir, useRuntimeHarness, waitUntil } from "./support/runtimeFakes.js";
import { tempDir } from "./support/tempDir.js";

const OPEN: SnapshotStoreOpenOptions = {
  rules: { machineVersions: { job: 1 } },
  onWarning: () => {},
  now: Date.now,
};

function record(id: string): ActorRecord {
  return {
    id,
    machineId: "job",
    machineVersion: 1,
    snapshot: {},
    status: "active",
    updatedAt: 1,
  };
}

/** Puts a file where the store's `actors/` folder was: every later write into it fails (root or not). */
function breakActorsDir(dir: string): void {
  renameSync(join(dir, "actors"), join(dir, "actors.away"));
  writeFileSync(join(dir, "actors"), "not a directory");
}

describe("the runtime's calls throw the exported classes", () => {
  const runtime = useRuntimeHarness(Date.UTC(2026, 10, 24, 9, 0, 0));

  it("start() on a state directory that cannot be created: StateDirNotWritableError", async () => {
    const file = join(tempDir("a2a-errors-"), "a-file");
    writeFileSync(file, "");
    const r = runtime({ stateDir: join(file, "state") });
    const error = await r.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StateDirNotWritableError);
    expect(error).toMatchObject({
      code: "STATE_DIR_NOT_WRITABLE",
      cause: expect.objectContaining({ code: "ENOTDIR" }),
    });
  });

  it("start() on a state file it cannot read: StateFileReadError", async () => {
    const dir = tempStateDir();
    mkdirSync(join(dir, "actors", "shard-00.ndjson"), { recursive: true });
    await expect(runtime({ stateDir: dir }).start()).rejects.toMatchObject({
      constructor: StateFileReadError,
      code: "STATE_FILE_UNREADABLE",
      file: join(dir, "actors", "shard-00.ndjson"),
    });
  });

  it("stop() when what it must write cannot be written: SnapshotStoreWriteError", async () => {
    const dir = tempStateDir();
    const r = runtime({
      stateDir: dir,
      gateway: new ScriptedGateway({ "agent:eden:main": [{ hangs: true }] }),
    });
    await r.start();
    await r.sessionsSend({ targetSessionKey: "agent:eden:main", message: "안녕" });
    breakActorsDir(dir);
    await expect(r.stop()).rejects.toBeInstanceOf(SnapshotStoreWriteError);
    rmSync(join(dir, "actors"));
    renameSync(join(dir, "actors.away"), join(dir, "actors"));
  });

  it("start() with a store another runtime holds open: SnapshotStoreInUseError", async () => {
    const store = createMemoryStore();
    await runtime({ stateDir: tempStateDir(), store }).start();
    await expect(runtime({ stateDir: tempStateDir(), store }).start()).rejects.toBeInstanceOf(
      SnapshotStoreInUseError,
    );
  });

  it("a call still waiting when the runtime stops: ActorStoppedError", async () => {
    const gateway = new ScriptedGateway({ "agent:eden:main": [{ hangs: true }] });
    const r = runtime({ stateDir: tempStateDir(), store: createMemoryStore(), gateway });
    await r.start();
    const answer = r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "안녕",
      timeoutSeconds: 60,
    });
    const settled = answer.then(
      () => undefined,
      (e: unknown) => e,
    );
    await waitUntil(() => gateway.waits.length === 1, "the wait started");
    await r.stop();
    const error = await settled;
    expect(error).toBeInstanceOf(ActorStoppedError);
    expect(error).toMatchObject({ code: "ACTOR_STOPPED", actorId: expect.stringMatching(/^flow-/) });
  });
});

describe("the durable host's calls throw the exported classes", () => {
  const hosts: DurableHost[] = [];
  const machine = createMachine({
    id: "job",
    initial: "waiting",
    states: {
      waiting: {
        on: {
          FINISH: "done",
          BREAK: {
            actions: () => {
              throw new Error("the action broke");
            },
          },
        },
      },
      done: { type: "final" },
    },
  });
  async function started(): Promise<DurableHost> {
    const host = createDurableHost({
      store: createMemoryStore(),
      machines: { job: { machine, version: 1 } },
      logger: { warn: () => {} },
    });
    hosts.push(host);
    await host.start();
    return host;
  }

  it("spawn of a taken id: ActorExistsError; send to none or a finished one: ActorNotFoundError", async () => {
    const host = await started();
    await host.spawn("job", "a");
    await expect(host.spawn("job", "a")).rejects.toMatchObject({
      constructor: ActorExistsError,
      code: "ACTOR_EXISTS",
      actorId: "a",
    });
    await expect(host.send("nobody", { type: "FINISH" })).rejects.toMatchObject({
      constructor: ActorNotFoundError,
      actorId: "nobody",
      status: undefined,
    });
    await host.send("a", { type: "FINISH" });
    await expect(host.send("a", { type: "FINISH" })).rejects.toMatchObject({
      constructor: ActorNotFoundError,
      status: "done",
    });
    await host.stop();
  });

  it("an event whose action throws: ActorFailedError, with what it threw as the cause", async () => {
    const host = await started();
    await host.spawn("job", "b");
    const error = await host.send("b", { type: "BREAK" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ActorFailedError);
    expect(error).toMatchObject({
      actorId: "b",
      kind: "job",
      cause: expect.objectContaining({ message: "the action broke" }),
    });
    await host.stop();
  });

  it("the lowdb store: a file it cannot read fails open() with StateFileReadError, a fold it cannot write fails close() with SnapshotStoreWriteError", async () => {
    const unreadable = tempDir("a2a-errors-");
    mkdirSync(join(unreadable, "actors", "shard-00.ndjson"), { recursive: true });
    await expect(createLowdbStore({ stateDir: unreadable }).open(OPEN)).rejects.toMatchObject({
      constructor: StateFileReadError,
      code: "STATE_FILE_UNREADABLE",
      cause: expect.objectContaining({ code: "EISDIR" }),
    });

    const dir = tempDir("a2a-errors-");
    const store = createLowdbStore({ stateDir: dir });
    await store.open(OPEN);
    await store.put([record("a")]);
    breakActorsDir(dir);
    await expect(store.close()).rejects.toMatchObject({
      constructor: SnapshotStoreWriteError,
      code: "SNAPSHOT_STORE_WRITE_FAILED",
    });
  });

  it("the lowdb store on a path it cannot create: StateDirNotWritableError", async () => {
    const file = join(tempDir("a2a-errors-"), "a-file");
    writeFileSync(file, "");
    await expect(createLowdbStore({ stateDir: join(file, "state") }).open(OPEN)).rejects.toBeInstanceOf(
      StateDirNotWritableError,
    );
  });

  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
  });
});

describe("the emulator's postAsUser throws DiscordError", () => {
  it("for an unknown user, with Discord's status and JSON code", async () => {
    const emulator = await startDiscordEmulator({
      channels: [{ id: "1100000000000000001", name: "general" }],
      users: [{ id: "1100000000000000100", name: "human", bot: false }],
    });
    try {
      const error = await emulator
        .postAsUser({ userId: "1100000000000000999", channelId: "1100000000000000001", content: "hi" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(DiscordError);
      expect(error).toMatchObject({ code: "DISCORD_EMULATOR_ERROR", status: 404, discordCode: 10013 });
    } finally {
      await emulator.close();
    }
  });
});
