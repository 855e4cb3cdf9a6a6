// Reads the JSON report of a vitest run (--reporter=json --outputFile.json=FILE), prints the closing
// line CI reads, and exits 1 when any test did not run: skipped, pending or todo. npm test runs every
// test; a skipped one reads as a pass, and the conditions that once switched tests off (no root, no
// patched binding) are the very regressions those tests guard. Used by .ci/run and the workflow.
//   node scripts/check-test-report.mjs FILE
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/check-test-report.mjs VITEST_JSON_REPORT');
  process.exit(2);
}
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`check-test-report: cannot read the vitest JSON report ${file}: ${err.message}`);
  process.exit(2);
}
const RAN = new Set(['passed', 'failed']);
const notRun = (report.testResults ?? []).flatMap((f) =>
  (f.assertionResults ?? []).filter((t) => !RAN.has(t.status)).map((t) => `${relative(process.cwd(), f.name)} > ${t.fullName} (${t.status})`),
);
const todo = report.numTodoTests ?? 0;
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped, ${todo} todo`);
if (notRun.length > 0 || report.numPendingTests > 0 || todo > 0) {
  console.error(`check-test-report: ${Math.max(notRun.length, report.numPendingTests + todo)} tests did not run; every test of npm test must run (fail on a missing precondition, never skip):\n  ${notRun.join('\n  ')}`);
  process.exit(1);
}
