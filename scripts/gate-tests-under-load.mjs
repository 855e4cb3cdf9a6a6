#!/usr/bin/env node
// The test files that run gates, run again beside a busy loop on every core: each must pass as it did
// on the quiet run, and every verdict a seed and a work budget determine (what the tests recorded
// under $POWERCUT_VERDICTS: src/cli/testing.ts recordVerdict) must be the same as the quiet run's.
// A gate whose findings moved with the machine's load fails here, named, instead of at random later.
//
//   node scripts/gate-tests-under-load.mjs QUIET_VERDICTS_DIR LOADED_VERDICTS_DIR
//
// QUIET_VERDICTS_DIR holds what the quiet run (npm test with POWERCUT_VERDICTS set) recorded; this
// records the loaded run's into LOADED_VERDICTS_DIR and compares. Exit status: 0 the same, 1 not (or
// a test failed), 2 usage.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The test files that run `powercut gate` (or runGate). */
const GATE_TEST_FILES = [
  'src/gate/cli.test.ts',
  'src/gate/repeat.test.ts',
  'src/gate/cluster-gate.test.ts',
  'examples/python-queue/python-queue.test.ts',
  'examples/cluster-driver/cluster-driver.test.ts',
  'src/targets/leveldb/leveldb.test.ts',
];
/** The busy loops are stopped after this long whatever happens (the tests' own bounds are shorter). */
const LOOP_LIMIT_S = 3 * 3600;

const [quiet, loaded] = process.argv.slice(2);
if (!quiet || !loaded) {
  console.error('usage: node scripts/gate-tests-under-load.mjs QUIET_VERDICTS_DIR LOADED_VERDICTS_DIR');
  process.exit(2);
}
if (!existsSync(quiet) || readdirSync(quiet).length === 0) {
  console.error(`gate-tests-under-load: ${quiet} holds no verdict: run npm test with POWERCUT_VERDICTS=${quiet} first`);
  process.exit(2);
}
rmSync(loaded, { recursive: true, force: true });

const cores = os.availableParallelism();
// One busy loop a core, each its own process, killed below on every path out, and ending by itself
// after LOOP_LIMIT_S should this script be killed first. (Not under timeout(1): a SIGKILL of timeout
// leaves its child spinning, which once left two loops behind a failed run for the next one.)
const loops = Array.from({ length: cores }, () => spawn(process.execPath, ['-e', `const end = Date.now() + ${LOOP_LIMIT_S * 1000}; while (Date.now() < end) {}`], { stdio: 'ignore' }));
const stopLoops = () => {
  for (const l of loops) if (l.exitCode === null && l.signalCode === null) l.kill('SIGKILL');
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { stopLoops(); process.exit(1); });
console.log(`gate-tests-under-load: ${GATE_TEST_FILES.length} test files beside ${cores} busy loops (one a core)`);

const vitest = spawn('npx', ['vitest', 'run', ...GATE_TEST_FILES], { stdio: 'inherit', env: { ...process.env, POWERCUT_VERDICTS: loaded } });
const testsExit = await new Promise((resolve) => vitest.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
stopLoops();

const names = (dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : []);
const differ = [];
for (const f of new Set([...names(quiet), ...names(loaded)])) {
  const a = path.join(quiet, f);
  const b = path.join(loaded, f);
  if (!existsSync(a) || !existsSync(b)) differ.push(`${f}: recorded only by the ${existsSync(a) ? 'quiet' : 'loaded'} run`);
  else if (readFileSync(a, 'utf8') !== readFileSync(b, 'utf8')) differ.push(`${f}: the verdicts differ (diff ${a} ${b})`);
}
const compared = names(quiet).length;
if (differ.length > 0) console.error(`gate-tests-under-load: ${differ.length} of ${compared} verdicts moved with the load:\n  ${differ.join('\n  ')}`);
else console.log(`gate-tests-under-load: all ${compared} verdicts the same beside ${cores} busy loops`);
if (testsExit !== 0) console.error(`gate-tests-under-load: the gate tests failed beside ${cores} busy loops (vitest exit ${testsExit})`);
process.exit(differ.length > 0 || testsExit !== 0 ? 1 : 0);
