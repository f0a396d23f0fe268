// Prints the vitest JSON report's totals as one line, "tests: N passed, N failed", and exits
// non-zero when a test failed or none ran, so CI can never pass on an empty suite.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "coverage/vitest-results.json";
const report = JSON.parse(readFileSync(file, "utf8"));
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
