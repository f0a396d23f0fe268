import type * as FsPromises from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { currentGeneration, type Generation, kill } from "./generations.js";

type Fs = typeof FsPromises;
type AnyFn = (...args: unknown[]) => unknown;

// Calls that change what is on disk: a crash point lies between two of them.
const MUTATING = new Set([
  "writeFile",
  "appendFile",
  "write",
  "writev",
  "sync",
  "datasync",
  "truncate",
  "rename",
  "rm",
  "rmdir",
  "unlink",
  "mkdir",
  "copyFile",
  "chmod",
  "utimes",
]);

/** A promise that never settles: what a call of a killed process looks like to the code after it. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

async function rounds(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function opensForWriting(flags: unknown): boolean {
  return typeof flags === "string" && /[wa+]/.test(flags);
}

/**
 * `node:fs/promises` as a crashing process sees it, for `vi.mock` in the model test. Outside a
 * generation (the test's own calls) it is the real module. Inside one, each call is counted; once
 * the generation's crash point is reached (or it is killed), no call of it starts or settles again,
 * and a file it opened late is closed. The chosen short write writes half its buffer and says so.
 */
export function crashableFs(real: Fs): Fs {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(real)) {
    if (typeof value !== "function" || name === "constants") {
      wrapped[name] = value;
      continue;
    }
    const fn = value as AnyFn;
    wrapped[name] =
      name === "open"
        ? (...args: unknown[]) => openHandle(fn, args)
        : (...args: unknown[]) => call(name, () => fn(...args) as Promise<unknown>);
  }
  return { ...wrapped, default: wrapped } as unknown as Fs;
}

function call<T>(name: string, run: () => Promise<T>, generation = currentGeneration()): Promise<T> {
  if (generation === undefined) return run();
  if (generation.dead) return never();
  if (MUTATING.has(name)) {
    if (
      generation.crashAfterMutations !== undefined &&
      generation.mutations >= generation.crashAfterMutations
    ) {
      void kill(generation);
      return never();
    }
    generation.mutations += 1;
  }
  generation.inflight += 1;
  const delay = generation.delays?.shift() ?? 0;
  return (delay > 0 ? rounds(delay).then(run) : run()).then(
    (value) => {
      generation.inflight -= 1;
      return generation.dead ? never<T>() : value;
    },
    (error: unknown) => {
      generation.inflight -= 1;
      return generation.dead ? never<T>() : Promise.reject(error);
    },
  );
}

function openHandle(open: AnyFn, args: unknown[]): Promise<FileHandle> {
  const generation = currentGeneration();
  const name = opensForWriting(args[1]) ? "writeFile" : "open";
  if (generation === undefined) return open(...args) as Promise<FileHandle>;
  const opening = call(
    name,
    async () => {
      const handle = (await open(...args)) as FileHandle;
      // Opened as the process died: the kernel closes it with the rest.
      if (generation.dead) await handle.close();
      else generation.handles.add(handle);
      return handle;
    },
    generation,
  );
  return opening.then((handle) => wrapHandle(handle, generation));
}

/** A FileHandle whose calls belong to its generation; closing it (or the generation dying) releases it. */
function wrapHandle(handle: FileHandle, generation: Generation): FileHandle {
  return new Proxy(handle, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as AnyFn;
      const name = String(property);
      if (name === "close") {
        return () =>
          call(
            name,
            async () => {
              generation.handles.delete(target);
              await target.close();
            },
            generation,
          );
      }
      if (name === "write") return (...args: unknown[]) => write(target, method, args, generation);
      // A process crash keeps what the kernel has: an fsync matters only to a power cut, not simulated
      // here. Still a crash point; skipping the disk flush keeps 500 sequences fast.
      if (name === "sync" || name === "datasync")
        return () => call(name, () => Promise.resolve(), generation);
      return (...args: unknown[]) =>
        call(name, () => Promise.resolve(method.apply(target, args)), generation);
    },
  });
}

function write(target: FileHandle, method: AnyFn, args: unknown[], generation: Generation) {
  const [buffer, offsetArg, lengthArg, position] = args;
  const offset = typeof offsetArg === "number" ? offsetArg : 0;
  const length =
    typeof lengthArg === "number" ? lengthArg : Buffer.isBuffer(buffer) ? buffer.length - offset : 0;
  const short =
    generation.shortWriteAt !== undefined &&
    generation.shortWritten === undefined &&
    generation.mutations + 1 >= generation.shortWriteAt &&
    Buffer.isBuffer(buffer) &&
    length > 1;
  if (!short) return call("write", () => Promise.resolve(method.apply(target, args)), generation);
  // As with a full disk or a file-size limit: part of the buffer lands and the call reports how much.
  // Both forms: write(buffer) at the file position, and write(buffer, offset, length, position).
  const half = Math.floor(length / 2);
  const at = typeof position === "number" ? position : null;
  return call(
    "write",
    async () => {
      generation.shortWritten = generation.mutations;
      const { bytesWritten } = await target.write(buffer, offset, half, at);
      return { bytesWritten, buffer };
    },
    generation,
  );
}
