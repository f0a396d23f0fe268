import { renameSync, rmSync, writeFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CAN_LIST_OPEN_FILES, openFilesUnder } from "../support/openFiles.js";
import {
  drain,
  FakeDiscord,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
  waitUntil,
} from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

/** Makes every snapshot write fail (a file where the shard directory was: ENOTDIR); returns the undo. */
function breakSnapshotWrites(dir: string): () => void {
  renameSync(join(dir, "actors"), join(dir, "actors.away"));
  writeFileSync(join(dir, "actors"), "not a directory");
  return () => {
    rmSync(join(dir, "actors"));
    renameSync(join(dir, "actors.away"), join(dir, "actors"));
  };
}

// Polled, not runtime.idle(): idle() waits for every write to land, and here a write is kept failing
// (retried on the clock this test moves by hand), so idle() would wait for good.
describe("createA2ARuntime: snapshot writes that fail", () => {
  it("answers and posts nothing until the snapshot is on disk, retrying the write until it lands", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const warnings: string[] = [];
    const r = runtime({ stateDir: dir, discord, logger: textLogger((w) => warnings.push(w)) });
    await r.start();
    const repair = breakSnapshotWrites(dir);

    let answered = false;
    const sending = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    void sending.then(() => (answered = true));
    await waitUntil(() => warnings.some((w) => w.includes("retrying in 100 ms")), "the first retry");
    // Backoff doubles while the disk stays broken; nothing reaches Discord, nobody is answered.
    await vi.advanceTimersByTimeAsync(100);
    await waitUntil(() => warnings.some((w) => w.includes("retrying in 200 ms")), "the second retry");
    await drain();
    expect(answered).toBe(false);
    expect(discord.messages).toHaveLength(0);

    repair();
    await vi.advanceTimersByTimeAsync(200);
    const sent = await sending;
    expect(sent.status).toBe("sent");
    // The starter and the mention, each once.
    expect(discord.messages).toHaveLength(2);

    // What the caller was told is on disk: a runtime started on the directory has the mention.
    await r.stop();
    const again = runtime({ stateDir: dir, discord });
    await again.start();
    expect(await again.mentions()).toEqual([
      expect.objectContaining({ id: sent.status === "sent" ? sent.mentionId : "", status: "pending" }),
    ]);
  });

  it("a journal append written short is not acknowledged: the caller is answered once a retry lands whole", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const warnings: string[] = [];
    const r = runtime({ stateDir: dir, discord, logger: textLogger((w) => warnings.push(w)) });
    await r.start();
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    rmSync(join(dir, "probe"));
    type Write = (buffer: Buffer, offset?: number, length?: number, position?: number) => Promise<unknown>;
    const realWrite = proto.write as unknown as Write;
    let full = true;
    // A full disk for snapshot appends only: half of each lands, then the next write fails.
    vi.spyOn(proto, "write").mockImplementation(async function (
      this: FileHandle,
      ...args: Parameters<Write>
    ) {
      const [buffer, offset = 0, length = buffer.byteLength - offset, position] = args;
      if (!full || !buffer.includes('"machineVersion"')) return realWrite.call(this, ...args);
      if (length < 64) throw new Error("ENOSPC: no space left on device, write");
      return realWrite.call(this, buffer, offset, length >> 1, position);
    } as never);

    let answered = false;
    const sending = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    void sending.then(() => (answered = true));
    await waitUntil(() => warnings.some((w) => w.includes("retrying in 100 ms")), "the first retry");
    await drain();
    expect(answered).toBe(false);
    expect(discord.messages).toHaveLength(0);

    full = false;
    await vi.advanceTimersByTimeAsync(100);
    const sent = await sending;
    vi.restoreAllMocks();
    expect(sent.status).toBe("sent");
    await r.stop();
    const again = runtime({ stateDir: dir, discord, logger: textLogger((w) => warnings.push(w)) });
    await again.start();
    expect(await again.mentions()).toEqual([
      expect.objectContaining({ id: sent.status === "sent" ? sent.mentionId : "", status: "pending" }),
    ]);
    expect(warnings.join("\n")).not.toMatch(/torn|ACKNOWLEDGED RECORDS MAY BE LOST/);
  });

  it("a caller still waiting when the runtime stops gets the write error, not silence", async () => {
    const dir = tempStateDir();
    const warnings: string[] = [];
    const r = createRuntimeQuietly(dir, warnings);
    await r.start();
    breakSnapshotWrites(dir);
    const sending = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    await waitUntil(() => warnings.some((w) => w.includes("retrying in")), "a retry");
    const outcome = expect(sending).rejects.toThrow(/A2ARuntime stopped before actor collab-/);
    await r.stop().catch(() => undefined);
    await outcome;
    // The store could not close cleanly; the event log and everything else are closed all the same.
    if (CAN_LIST_OPEN_FILES) expect(openFilesUnder(dir)).toEqual([]);
  });

  function createRuntimeQuietly(dir: string, warnings: string[]) {
    return runtime({
      stateDir: dir,
      config: runtimeConfig,
      discord: new FakeDiscord(),
      logger: textLogger((w) => warnings.push(w)),
    });
  }
});
