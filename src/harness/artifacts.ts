// Failure artifacts: one folder per violation with everything needed to understand and replay
// it (DESIGN.md section 6). Layout:
//   case.json                 workload, settings, variant, crash point, policy, seed, faults, second cut
//   violations.json / .txt    the violated checks and their messages
//   outcomes/run-K-ROLE.jsonl each driver's outcome lines (run 0 = workload, last = final drain)
//   trace-cut-K.json / .txt   the mutating requests up to cut K (the .txt marks the cut)
//   images/cut-K-durable, images/cut-K-live   the filesystem at cut K, as ordinary files
//   images/cut-K-after-crash  what recovery started from (after the policy was applied)
//   stderr/run-K.txt          driver diagnostics, when there were any
//   replay.sh                 the one command that replays it
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { CaseResult, CrashCase, CutRecord } from './crash-run.js';
import { REPO_ROOT } from './dist-path.js';
import type { RunRecord, Violation } from './oracle.js';
import { parseOutcomes } from './outcome.js';
import { formatTrace } from './trace-format.js';
import { parseWorkload } from './workload.js';

export interface StoredArtifact {
  dir: string;
  case: CrashCase;
  runs: RunRecord[];
  cuts: CutRecord[];
  violations: Violation[];
}

export function replayCommand(dir: string): string {
  return `node ${path.join(REPO_ROOT, 'dist/src/cli.js')} replay ${dir}`;
}

function folderName(result: CaseResult): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const check = result.violations[0]?.check ?? 'none';
  const random = Math.random().toString(36).slice(2, 8);
  return `${stamp}-${result.case.variant ?? 'queue'}-${check}-${random}`;
}

/** Writes the artifact folder under `root` and returns its path. `imagesDir` holds the images captured at the cuts. */
export async function writeArtifact(root: string, result: CaseResult, imagesDir?: string): Promise<string> {
  const dir = path.resolve(root, folderName(result));
  await mkdir(path.join(dir, 'outcomes'), { recursive: true });
  const json = (x: unknown) => JSON.stringify(x, null, 2) + '\n';
  await writeFile(path.join(dir, 'case.json'), json(result.case));
  await writeFile(path.join(dir, 'violations.json'), json(result.violations));
  await writeFile(path.join(dir, 'violations.txt'), result.violations.map((v) => v.message).join('\n') + '\n');
  for (const [k, run] of result.runs.entries()) {
    const meta = { exitCode: run.exitCode, killed: run.killed, hung: run.hung, failedRequests: run.failedRequests };
    await writeFile(path.join(dir, 'outcomes', `run-${k}-${run.role}.jsonl`), run.outcomes.map((o) => JSON.stringify(o) + '\n').join(''));
    await writeFile(path.join(dir, 'outcomes', `run-${k}-${run.role}.meta.json`), json(meta));
    if (result.stderr[k]) {
      await mkdir(path.join(dir, 'stderr'), { recursive: true });
      await writeFile(path.join(dir, 'stderr', `run-${k}.txt`), result.stderr[k]);
    }
  }
  for (const [k, cut] of result.cuts.entries()) {
    const timing = k === 0 ? result.case.cut?.timing : result.case.recoveryCut?.cut.timing;
    await writeFile(path.join(dir, `trace-cut-${k}.json`), json({ frozenAt: cut.frozenAt, trace: cut.trace }));
    await writeFile(path.join(dir, `trace-cut-${k}.txt`), formatTrace(cut.trace, cut.frozenAt, timing) + '\n');
  }
  if (imagesDir && existsSync(imagesDir)) await cp(imagesDir, path.join(dir, 'images'), { recursive: true });
  await writeFile(path.join(dir, 'replay.sh'), `#!/bin/sh\n# Re-runs this crash case exactly; exits 1 if the violation reproduces.\nexec ${replayCommand('"$(dirname "$0")"')}\n`, { mode: 0o755 });
  return dir;
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); is this an artifact folder?`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** Reads an artifact folder back; every error names the file that is wrong. */
export async function readArtifact(dir: string): Promise<StoredArtifact> {
  const casePath = path.join(dir, 'case.json');
  const c = (await readJson(casePath)) as CrashCase;
  if (typeof c !== 'object' || c === null) throw new Error(`${casePath}: expected an object`);
  c.workload = parseWorkload(c.workload, `${casePath}: workload`);
  if (typeof c.settings !== 'object' || c.settings === null) throw new Error(`${casePath}: settings must be an object`);
  if (typeof c.policy !== 'string') throw new Error(`${casePath}: policy is missing`);
  if (!Number.isInteger(c.seed)) throw new Error(`${casePath}: seed must be an integer`);
  const violations = (await readJson(path.join(dir, 'violations.json'))) as Violation[];
  const runFiles = (await readdir(path.join(dir, 'outcomes'))).filter((f) => f.endsWith('.jsonl')).sort((a, b) => parseInt(a.slice(4)) - parseInt(b.slice(4)));
  const runs: RunRecord[] = [];
  for (const f of runFiles) {
    const role = f.replace(/^run-\d+-/, '').replace('.jsonl', '') as RunRecord['role'];
    const text = await readFile(path.join(dir, 'outcomes', f), 'utf8');
    const meta = (await readJson(path.join(dir, 'outcomes', f.replace('.jsonl', '.meta.json')))) as Omit<RunRecord, 'role' | 'outcomes'>;
    runs.push({ role, outcomes: parseOutcomes(text, path.join(dir, 'outcomes', f)), ...meta });
  }
  const cuts: CutRecord[] = [];
  for (let k = 0; existsSync(path.join(dir, `trace-cut-${k}.json`)); k++) {
    cuts.push((await readJson(path.join(dir, `trace-cut-${k}.json`))) as { frozenAt: number | null; trace: TraceEntry[] });
  }
  return { dir, case: c, runs, cuts, violations };
}
