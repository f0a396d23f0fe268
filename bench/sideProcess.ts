import { spawn } from "node:child_process";

/**
 * Runs a side of a comparison in its own process (`node [nodeArgs] --import tsx <file> ...args`), so
 * that its memory and compiled code are its own, and parses the one JSON document it prints.
 */
export function sideProcess<T>(file: string, args: string[], nodeArgs: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", file, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out) as T)
        : reject(new Error(`${file} ${args.join(" ")} exited with ${code}`)),
    );
  });
}
