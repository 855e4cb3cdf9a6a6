// The cause of a failure (pure): the step the program missed, in its own terms, with what proved it.
// A failing crash state says where the power went; its cause says which fsync of what, after which
// request and before which confirmation, would have kept it from failing (search.ts finds it by
// probing), whether adding that step removes the failure from the whole recorded run (proof.ts),
// and whether it bites a journaling filesystem like ext4 too (reach.ts). Failures group by cause.
import type { LostUnit, UnitChange } from '../../../fusefs/crash-states.js';
import { pathPattern } from '../path-pattern.js';

export const CAUSE_KINDS = [
  /** A file's change a cut lost, needed by what the program did or promised next: an fsync of the file was missing. */
  'missing-fsync',
  /** A directory entry change a cut lost, needed next: an fsync of the directory was missing. */
  'missing-dir-fsync',
  /** A confirmation printed while the fsync that made it true had not completed: the program did not wait. */
  'early-confirmation',
  /** A persistence point made a change durable before what must come first was: undoing it recovers. */
  'early-persistence',
  /** Two directory operations that leave an unrecoverable state between them (a replacement in two steps). */
  'non-atomic-update',
  /** The disk held a legal state, a write persisted in part, and recovery mishandled it. */
  'torn-write',
  /** Even with every change the program made kept, recovery fails: what a process crash leaves already fails. */
  'recovery-fails-on-legal-disk',
  /** A fault was injected, the filesystem failed a request, and the queue went on as if it had not. */
  'swallowed-error',
  /** Read faults damaged the disk, and recovery trusted the damaged bytes (or dropped durable records silently). */
  'damaged-data-trusted',
  /** No cause was isolated: the search's bound was reached, or no probe explained the failure (said why). */
  'not-isolated',
] as const;
export type CauseKind = (typeof CAUSE_KINDS)[number];

/** The bound a search runs within, stated with every cause it finds. */
export interface SearchBound {
  maxProbes: number;
  maxMs: number;
}
export const DEFAULT_SEARCH_BOUND: SearchBound = { maxProbes: 100, maxMs: 20_000 };

/** The proof of a fix over the whole recording: the run's states re-enumerated with the step added, and judged. */
export interface CauseProof {
  /** The step, in words: "an fsync of / after request 1". */
  step: string;
  /** Persistence intervals of the run without and with the step, and how many failed. */
  intervalsBefore: number;
  failingBefore: number;
  intervalsAfter: number;
  failingAfter: number;
  /** States judged with the step, and whether a cap or the time bound left some out. */
  states: number;
  capped: boolean;
  /** The signatures still failing with the step (another cause, or the fix is not enough). */
  stillFailing: string[];
  ms: number;
}

/** Whether the cause bites a journaling filesystem in its default mode (ext4 data=ordered), under the journaled model. */
export interface CauseReach {
  journaled: boolean;
  /** In words: "only on a filesystem as strict as POSIX allows (not on ext4's default mode)" or "also under the journaled model, as on ext4". */
  words: string;
  /** Why: the journaled state that shows it, or how many journaled states were checked without showing it. */
  why: string;
  statesChecked: number;
  ms: number;
}

/** The fix as a change to the recorded run, for its proof: an fsync inserted after a request, or a line printed only after a request completed. */
export type FixStep =
  | { kind: 'fsync-after'; afterOp: number; ino: number; path: string; dir: boolean }
  | { kind: 'wait'; line: number; untilOp: number };

export interface Cause {
  kind: CauseKind;
  /** What makes two failures the same cause: kind, unit and path pattern, operation kind (never a request number). */
  key: string;
  /** The key in words, for a summary's heading: "missing fsync of directory / after create of /page.*". */
  title: string;
  /** The fix a programmer makes, in the program's terms and order. */
  fix: string;
  /** The unit the state lost that matters, and the one change in it. */
  unit?: Pick<LostUnit, 'kind' | 'ino' | 'path'>;
  change?: UnitChange;
  /** What the missing step must come before: a line the program printed (a confirmation), or a request. */
  before?: string;
  /** The fix as a change to the recorded run (persistence causes): what the proof applies. */
  step?: FixStep;
  /** The other units the state needed made durable with the first (a 1-minimal set of several): fsyncs the proof adds too. */
  alsoSteps?: FixStep[];
  /** The evidence, in words (what the probes showed). */
  evidence: string[];
  /** What the search took, against its bound. */
  search: { probes: number; ms: number; bound: SearchBound; boundReached: boolean };
  proof?: CauseProof;
  reach?: CauseReach;
}

/** A change in words: "create /page.2 (request 40)", "its write at request 40 (bytes 0-4095)". */
export function changeInWords(unit: Pick<LostUnit, 'kind' | 'path'>, c: UnitChange): string {
  if (unit.kind === 'dir') {
    const e = c.entries?.[0];
    const what = e ? `${c.kind} ${unit.path === '/' ? '' : unit.path}/${e.name}` : c.kind;
    return `${what} (request ${c.op})`;
  }
  if (c.kind === 'truncate') return `its truncate to ${c.length} bytes at request ${c.op}`;
  if (c.kind.startsWith('fallocate')) return `its ${c.kind} at request ${c.op} (bytes ${c.offset}-${(c.offset ?? 0) + (c.length ?? 0) - 1})`;
  return `its write at request ${c.op} (bytes ${c.offset}-${(c.offset ?? 0) + (c.length ?? 0) - 1})`;
}

/** The path a directory change is about (its entry), or the unit's own path. */
export function changedPath(unit: Pick<LostUnit, 'kind' | 'path'>, c: UnitChange | undefined): string {
  if (unit.kind !== 'dir' || !c?.entries?.[0]) return unit.path;
  return `${unit.path === '/' ? '' : unit.path}/${c.entries[0].name}`;
}

/** The grouping key of a persistence cause: "missing-dir-fsync / create /page.*". */
export function persistenceKey(kind: CauseKind, unit: Pick<LostUnit, 'kind' | 'path'>, c: UnitChange | undefined): string {
  return `${kind} ${pathPattern(unit.path)} ${c?.kind ?? ''} ${pathPattern(changedPath(unit, c))}`.trim();
}

/** The heading of a persistence cause. */
export function persistenceTitle(kind: CauseKind, unit: Pick<LostUnit, 'kind' | 'path'>, c: UnitChange | undefined): string {
  const what = c ? ` after ${c.kind} of ${pathPattern(changedPath(unit, c))}` : '';
  switch (kind) {
    case 'missing-dir-fsync': return `missing fsync of directory ${pathPattern(unit.path)}${what}`;
    case 'missing-fsync': return `missing fsync of ${pathPattern(unit.path)}${c ? ` after its ${c.kind}` : ''}`;
    default: return `${kind} ${pathPattern(unit.path)}${what}`;
  }
}

/** The reach of a cause, in the words the summary and the report use. */
export function reachWords(journaled: boolean): string {
  return journaled ? 'also under the journaled model, as on ext4' : "only on a filesystem as strict as POSIX allows (not on ext4's default mode)";
}

/** "with an fsync of / after request 1: 0 of 317 intervals fail (was 41 of 316)", with what was left out. */
export function proofInWords(p: CauseProof): string {
  const still = p.stillFailing.length ? `; still failing: ${p.stillFailing.join('; ')}` : '';
  const capped = p.capped ? ` (within the caps and ${(p.ms / 1000).toFixed(1)} s: ${p.states} states judged)` : ` (${p.states} states judged in ${(p.ms / 1000).toFixed(1)} s)`;
  return `with ${p.step}: ${p.failingAfter} of ${p.intervalsAfter} intervals fail (was ${p.failingBefore} of ${p.intervalsBefore})${capped}${still}`;
}

/** A cause as labelled lines, in the order a reader wants them: the fix, its proof, its reach, what the search took. */
export function causeFacts(c: Cause): { label: string; text: string }[] {
  const out = [{ label: 'cause', text: c.title }, { label: 'fix', text: c.fix }];
  if (c.proof) out.push({ label: 'proof', text: proofInWords(c.proof) });
  else if (c.step) out.push({ label: 'proof', text: 'not computed (the gate proves each cause once, on its first case)' });
  else if (c.kind !== 'not-isolated') out.push({ label: 'proof', text: 'none in the recording: the fix is in recovery or in the order of the program\'s steps (replay the artifact with the fixed code)' });
  if (c.reach) out.push({ label: 'reach', text: `${c.reach.words}: ${c.reach.why}` });
  if (c.search.probes > 0 || c.search.boundReached) {
    out.push({ label: 'search', text: `${c.search.probes} probes, ${(c.search.ms / 1000).toFixed(1)} s (bound ${c.search.bound.maxProbes} probes, ${c.search.bound.maxMs / 1000} s${c.search.boundReached ? ': reached' : ''})` });
  }
  return out;
}
