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
  /** Absent under a gate's work budget: the probes alone bound the search, so what it finds does not depend on the machine's speed. */
  maxMs?: number;
}
export const DEFAULT_SEARCH_BOUND: Required<SearchBound> = { maxProbes: 100, maxMs: 20_000 };

/** `bound`, also ending at `endMs` (a Date.now() time); with no time bound and no end (a work budget), its probes alone. */
export function boundUntil(bound: SearchBound, endMs: number, minMs = 0): SearchBound {
  if (bound.maxMs === undefined && endMs === Infinity) return bound;
  return { ...bound, maxMs: Math.min(bound.maxMs ?? Infinity, Math.max(minMs, endMs - Date.now())) };
}

/**
 * The proof of a fix over the whole recording: the run's states listed again with the step added,
 * judged, and compared cut by cut (the same policy, the power going after the same request of the
 * program) with the run's own verdicts, so both counts are of the same states.
 */
export interface CauseProof {
  /** The step, in words: "an fsync of / after request 1". */
  step: string;
  /** The run's failing states whose cuts the proof judged again with the fix. */
  failing: number;
  /** Of them, those whose cut passes with the fix: the states the cause explains. */
  cured: number;
  /** Whether the state the cause was found on is cured (else it is not that state's cause). */
  curesOwnState: boolean;
  /** States that passed without the fix and fail with it: a fix that breaks them is no fix. */
  broken: number;
  /** Signatures of failing states the fix makes possible that the run never had (a cut right after an inserted fsync): what else the program gets wrong. */
  exposed: string[];
  /** States judged with the fix, and whether a cap or the time bound left some out. */
  states: number;
  capped: boolean;
  /** The signatures of the failing states the fix leaves failing (another cause, or the fix is not enough). */
  stillFailing: string[];
  ms: number;
  /** Failing states that pass with this fix and another proven one together (a confirmation withheld): counted in `cured`. */
  jointly?: { step: string; cured: number }[];
}

/** Whether the cause bites a journaling filesystem in its default mode (ext4 data=ordered), under the journaled model. */
export interface CauseReach {
  /** A journaled state fails by it. */
  journaled: boolean;
  /** Not journaled: every journaled state of the cuts where it bites was judged (else it was only not seen). */
  complete: boolean;
  /** In words: reachWords. */
  words: string;
  /** Why: the journaled state that shows it, or how many journaled states were checked without showing it, of how many. */
  why: string;
  statesChecked: number;
  ms: number;
}

/**
 * The fix as a change to the recorded run, for its proof: an fsync inserted after a request, a line
 * printed only after a request completed, or a persistence point that came too early moved after the
 * next one (what it made durable becomes durable then).
 */
export type FixStep =
  | { kind: 'fsync-after'; afterOp: number; ino: number; path: string; dir: boolean }
  | { kind: 'wait'; line: number; untilOp: number }
  | { kind: 'move'; op: number; afterOp: number };

/**
 * How a cause was found: a cause proven earlier in the same gate run, its fix applied to this run
 * and proven again (`known`); a candidate read off the recording (a shape most durability bugs
 * have, visible in the requests) and proven directly (`candidate`); or the probing search that
 * reduces what the state lost (`reduction`). Every route ends in the same proof.
 */
export const CAUSE_ROUTES = ['known', 'candidate', 'reduction'] as const;
export type CauseRoute = (typeof CAUSE_ROUTES)[number];

export interface Cause {
  kind: CauseKind;
  /** How it was found (absent: by reduction, or not a proven cause). */
  route?: CauseRoute;
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
  /** An unexplained state's: the known causes and candidates whose proof failed on its run, each with why. */
  tried?: string[];
  /** What the search took, against its bound. */
  search: { probes: number; ms: number; bound: SearchBound; boundReached: boolean };
  proof?: CauseProof;
  /** A proof of another kind, for a cause whose fix is not in the recording (recovery's, or a fault's), in words: what was checked. */
  proven?: string;
  /**
   * The failing states of its run it stands for, of how many failed: those it explains (set cover,
   * attribute.ts), or, unexplained (not-isolated), those of its signature no proven cause explains.
   */
  failingStates?: { count: number; of: number };
  reach?: CauseReach;
}

/**
 * What a gate groups a failure under: its cause's key, but a confirmation printed too early is one
 * mistake whichever fsync it did not wait for (the page's, the checkpoint's, the directory's that
 * makes a rename durable). Which of them a state names is the first after which it passes, and that
 * moves with where its cut fell, so keyed by path one bug read as several.
 */
export function groupKeyOf(c: Pick<Cause, 'kind' | 'key'>): string {
  return c.kind === 'early-confirmation' ? `early-confirmation of "${c.key.split(' ').at(-1)}"` : c.key;
}

/** Whether a gate's distinct failure is grouped by its cause (not by a signature, nor as an unexplained state). */
export function groupedByCause<F extends { key: string; cause?: Cause }>(f: F): f is F & { cause: Cause } {
  return f.cause !== undefined && f.key === groupKeyOf(f.cause);
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

/**
 * The reach of a cause, in the words the summary and the report use. "Not on ext4" only when every
 * journaled state of the cuts where it bites was judged and passed; a capped or timed-out check
 * only did not see it.
 */
export function reachWords(journaled: boolean, complete: boolean): string {
  if (journaled) return 'also under the journaled model, as on ext4';
  return complete ? "only on a filesystem as strict as POSIX allows (not on ext4's default mode)" : 'not seen under the journaled model (the check was not complete: it may still bite ext4)';
}

/** "requests 3-5, 9 (4 requests)": request numbers as ranges and a count, however many. */
export function requestsInWords(ops: readonly number[]): string {
  const sorted = [...new Set(ops)].sort((a, b) => a - b);
  if (sorted.length === 1) return `request ${sorted[0]}`;
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    ranges.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  const shown = ranges.length > 8 ? [...ranges.slice(0, 4), '...', ...ranges.slice(-3)] : ranges;
  return `requests ${shown.join(', ')} (${sorted.length} requests)`;
}

/** "with an fsync of / after request 1: 12 of the 12 failing states of the run pass on the same cuts; no state that passed fails". */
export function proofInWords(p: CauseProof): string {
  const own = p.curesOwnState ? '' : ', but not the state it was found on';
  const broken = p.broken ? `; ${p.broken} state${p.broken === 1 ? '' : 's'} that passed fail${p.broken === 1 ? 's' : ''} with it` : '; no state that passed fails';
  const still = p.stillFailing.length ? `; still failing: ${p.stillFailing.join('; ')}` : '';
  const exposed = p.exposed.length ? `; new states it makes (right after an inserted fsync) fail: ${p.exposed.join('; ')}` : '';
  const jointly = (p.jointly ?? []).map((j) => `; ${j.cured} of them pass only with ${j.step} too (a fix proven on its own)`).join('');
  const judged = p.capped ? ` (within the caps and ${(p.ms / 1000).toFixed(1)} s: ${p.states} states judged)` : ` (${p.states} states judged in ${(p.ms / 1000).toFixed(1)} s)`;
  return `with ${p.step}: ${p.cured} of the ${p.failing} failing states of the run pass on the same cuts${jointly}${own}${broken}${judged}${still}${exposed}`;
}

/**
 * A proof that names its cause for the states it cures: some cured, nothing that passed broken. The
 * state it was found on need not be among them (it is then left to another cause, or unexplained).
 */
export function proofHolds(p: CauseProof): boolean {
  return p.broken === 0 && p.cured > 0;
}

/** How a cause was found, in words (the summary's "found:" line). */
export const ROUTE_WORDS: Readonly<Record<CauseRoute, string>> = {
  known: 'a cause proven earlier in this run, its fix carried over to this run and proven again (no search)',
  candidate: 'read off the recording (a step relied on before it was made durable), then proven (no search)',
  reduction: 'by the probing search, reducing what the state lost, then proven',
};

/** A cause as labelled lines, in the order a reader wants them: the fix, its proof, how it was found, its reach, what the search took. */
export function causeFacts(c: Cause): { label: string; text: string }[] {
  const out = [{ label: 'cause', text: c.title }, { label: 'fix', text: c.fix }];
  if (c.route && c.kind !== 'not-isolated') out.push({ label: 'found', text: ROUTE_WORDS[c.route] });
  if (c.proof) out.push({ label: 'proof', text: proofInWords(c.proof) });
  else if (c.kind !== 'not-isolated') out.push({ label: 'proof', text: c.proven ?? 'not computed' });
  if (c.failingStates && c.kind !== 'not-isolated') out.push({ label: 'states', text: `it explains ${c.failingStates.count} of the ${c.failingStates.of} failing states of its run` });
  if (c.reach) out.push({ label: 'reach', text: `${c.reach.words}: ${c.reach.why}` });
  if (c.tried?.length) out.push({ label: 'tried', text: c.tried.join('; ') });
  if (c.search.probes > 0 || c.search.boundReached) {
    out.push({ label: 'search', text: `${c.search.probes} probes, ${(c.search.ms / 1000).toFixed(1)} s (bound ${c.search.bound.maxProbes} probes${c.search.bound.maxMs !== undefined ? `, ${c.search.bound.maxMs / 1000} s` : ''}${c.search.boundReached ? ': reached' : ''})` });
  }
  return out;
}
