import { defineConfig } from "vitest/config";

// The OpenClaw plugin against the real gateway (Node 24 and openclaw installed by the test itself, or
// beforehand by scripts/openclaw-install.mjs). One gateway at a time: it peaks near 2 GB and both cores.
export default defineConfig({
  test: {
    include: ["packages/openclaw/test/e2e/**/*.test.ts"],
    setupFiles: ["test/support/setup.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
