// Writes test-durations.json (seconds per test file) from a vitest JSON report, for the sequencer
// that runs the longest files first on a fresh clone (vitest.sequencer.ts). Refresh it when files
// are added or their times change a lot:
//   npm test -- --reporter=default --reporter=json --outputFile.json=powercut-artifacts/vitest.json
//   node scripts/test-durations.mjs powercut-artifacts/vitest.json
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/test-durations.mjs VITEST_JSON_REPORT');
  process.exit(2);
}
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`test-durations: cannot read the vitest JSON report ${file}: ${err.message}`);
  process.exit(2);
}
const seconds = Object.fromEntries(
  (report.testResults ?? [])
    .map((f) => [relative(process.cwd(), f.name), Math.round((f.endTime - f.startTime) / 100) / 10])
    .sort((a, b) => b[1] - a[1]),
);
writeFileSync('test-durations.json', `${JSON.stringify({ measuredOn: new Date().toISOString().slice(0, 10), seconds }, null, 1)}\n`);
console.log(`test-durations.json: ${Object.keys(seconds).length} files, ${Object.values(seconds).reduce((s, x) => s + x, 0).toFixed(0)} s in all`);
