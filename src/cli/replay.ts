// `powercut replay DIR`: re-runs a failure artifact exactly and says whether it reproduces.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readArtifact, type StoredArtifact } from '../harness/artifacts.js';
import { replayRecovery, runCase } from '../harness/crash-run.js';
import { startDaemon } from '../harness/daemon-process.js';
import { diffImages } from '../harness/image-diff.js';
import type { Violation } from '../harness/oracle.js';
import { formatTrace } from '../harness/trace-format.js';
import { parseCommandArgs, usageFail, type Command } from './usage.js';

export const help = `usage: powercut replay DIR [--trace-lines N]

Re-runs the crash case stored in the artifact folder DIR (written by the property suites or the
gate when a check failed) on a fresh mount: same workload, settings, variant, crash point, policy,
seed and faults. Prints the recorded violation, the trace with the power cut marked, the files
that differ between the live and the durable image at the cut, then the violation found again.
If the full re-run does not reproduce it, recovery alone is replayed from the stored post-crash
image (the exact disk state the recovery saw).

options:
  --trace-lines N   print at most N trace lines before the cut (default 40; 0 = all)
  -h, --help        this text

exit status: 1 the violation reproduces; 0 it does not; 2 usage error or unreadable artifact.`;

const checksOf = (vs: readonly Violation[]) => [...new Set(vs.map((v) => v.check))].sort().join(',');

function describeCase(a: StoredArtifact): string {
  const c = a.case;
  const cut = c.cut ? `request ${c.cut.atOp}${c.cut.kind ? ` (${c.cut.kind})` : ''}${c.cut.path ? ` touching ${c.cut.path}` : ''}, ${c.cut.timing}` : 'after the workload (fault run)';
  return [
    `queue:    ${c.variant ? `known-bad variant '${c.variant}'` : 'the real queue'}, settings ${JSON.stringify(c.settings)}`,
    `workload: ${c.workload.steps.length} steps`,
    `cut:      ${cut}, policy ${c.policy}, seed ${c.seed}`,
    ...(c.faults?.length ? [`faults:   ${JSON.stringify(c.faults)}`] : []),
    ...(c.recoveryCut ? [`2nd cut:  during recovery at request ${c.recoveryCut.cut.atOp}, ${c.recoveryCut.cut.timing}, policy ${c.recoveryCut.policy}, seed ${c.recoveryCut.seed}`] : []),
  ].join('\n');
}

function traceExcerpt(a: StoredArtifact, k: number, maxBefore: number): string {
  const cut = a.cuts[k];
  const timing = k === 0 ? a.case.cut?.timing : a.case.recoveryCut?.cut.timing;
  const lines = formatTrace(cut.trace, cut.frozenAt, timing).split('\n');
  if (maxBefore === 0 || lines.length <= maxBefore + 5) return lines.join('\n');
  const at = lines.findIndex((l) => l.startsWith('----- POWER CUT'));
  const from = Math.max(0, at - maxBefore);
  return [`  ... ${from} earlier requests (full trace: ${path.join(a.dir, `trace-cut-${k}.txt`)})`, ...lines.slice(from, at + 5)].join('\n');
}

async function withDaemon<T>(imageDir: string | undefined, f: (d: Awaited<ReturnType<typeof startDaemon>>) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'powercut-replay-'));
  try {
    const daemon = await startDaemon({ mountpoint: path.join(dir, 'mnt'), socketPath: path.join(dir, 'control.sock'), ...(imageDir ? { imageDir } : {}) });
    try {
      return await f(daemon);
    } finally {
      await daemon.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const run: Command = async (argv) => {
  const parsed = parseCommandArgs({ args: argv, allowPositionals: true, options: { 'trace-lines': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (parsed.values.help) {
    console.log(help);
    return 0;
  }
  if (parsed.positionals.length !== 1) usageFail('replay needs exactly one artifact folder', help);
  const traceLines = parsed.values['trace-lines'] === undefined ? 40 : Number(parsed.values['trace-lines']);
  if (!Number.isInteger(traceLines) || traceLines < 0) usageFail(`--trace-lines must be an integer >= 0, got ${parsed.values['trace-lines']}`, help);
  const dir = path.resolve(parsed.positionals[0]);
  let artifact: StoredArtifact;
  try {
    artifact = await readArtifact(dir);
  } catch (err) {
    usageFail((err as Error).message, help);
  }

  console.log(`artifact ${dir}\n${describeCase(artifact)}\n`);
  console.log('recorded violation:');
  for (const v of artifact.violations) console.log(`  ${v.message}`);
  for (let k = 0; k < artifact.cuts.length; k++) {
    console.log(`\ntrace up to cut ${k + 1} (${k === 0 ? 'workload' : 'during recovery'}):\n${traceExcerpt(artifact, k, traceLines)}`);
    const live = path.join(dir, 'images', `cut-${k}-live`);
    const durable = path.join(dir, 'images', `cut-${k}-durable`);
    if (existsSync(live) && existsSync(durable)) {
      const diff = await diffImages(live, durable);
      console.log(`\nfiles the cut changes (live vs durable at cut ${k + 1}):${diff.length ? '' : ' none'}`);
      for (const d of diff) console.log(`  ${d.file}: ${d.what}`);
    }
  }

  console.log('\nre-running the case on a fresh mount...');
  const rerun = await withDaemon(undefined, (d) => runCase(d, artifact.case, { writeArtifacts: false, captureImages: false }));
  if (rerun.violations.length && checksOf(rerun.violations) === checksOf(artifact.violations)) {
    console.log('REPRODUCED:');
    for (const v of rerun.violations) console.log(`  ${v.message}`);
    return 1;
  }
  console.log(rerun.violations.length ? `the re-run found other violations:\n${rerun.violations.map((v) => `  ${v.message}`).join('\n')}` : 'the full re-run passed (the request order can differ between runs).');

  const last = artifact.cuts.length - 1;
  const image = path.join(dir, 'images', `cut-${last}-after-crash`);
  if (!existsSync(image)) {
    console.log('not reproduced (no post-crash image stored to replay recovery from)');
    return 0;
  }
  console.log(`replaying recovery from the stored post-crash image ${image}...`);
  const replay = await withDaemon(image, (d) => replayRecovery(d, artifact.case, artifact.runs.slice(0, -1)));
  if (replay.violations.length && checksOf(replay.violations) === checksOf(artifact.violations)) {
    console.log('REPRODUCED from the stored crash image:');
    for (const v of replay.violations) console.log(`  ${v.message}`);
    return 1;
  }
  console.log(`not reproduced${replay.violations.length ? `; recovery replay found: ${replay.violations.map((v) => v.message).join('; ')}` : ''}`);
  return 0;
};
