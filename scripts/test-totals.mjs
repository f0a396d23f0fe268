// Prints the totals of vitest JSON reports (several runs of one CI job) as one line, "tests: N passed,
// N failed", and exits non-zero when a test failed or none ran, so CI can never pass on an empty suite.
import { readFileSync } from "node:fs";

const files = process.argv.length > 2 ? process.argv.slice(2) : ["coverage/vitest-results.json"];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
