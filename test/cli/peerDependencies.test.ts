import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { loadPeer } from "../../src/cli/peerDependencies.js";

const ROOT = resolve(import.meta.dirname, "../..");

// Run by Node itself (not vitest's module loader), so the error is the one a user's missing package gives.
it("a command whose optional package is missing says which one to install", async () => {
  const script = `
    import { loadPeer } from ${JSON.stringify(join(ROOT, "src/cli/peerDependencies.ts"))};
    await loadPeer(() => import("a2a-no-such-package")).catch((error) => console.log(error.message));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    {
      cwd: ROOT,
    },
  );
  expect(stdout.trim()).toBe(
    "this command needs a2a-no-such-package, which is not installed: npm install a2a-no-such-package",
  );
});

it("any other failure to load is passed on as it is", async () => {
  const broken = new SyntaxError("Unexpected token");
  await expect(loadPeer(() => Promise.reject(broken))).rejects.toBe(broken);
});
