// What a named crash scenario is: one deterministic crash case, the real failure it models, the
// known-bad variant it exposes and the check that variant must trip. The correct queue must pass
// it; the variant must fail exactly that check (a hang or a harness error never counts).
import type { CrashCase } from '../src/harness/crash-case.js';
import { CHECKS, type CheckName } from '../src/harness/oracle.js';
import { findTarget } from '../src/targets/index.js';

export interface Scenario {
  /** Kebab-case, unique; what `powercut scenario run NAME` takes. */
  name: string;
  /** One line for `powercut scenario list`. */
  summary: string;
  /** The real-world failure it models and where it was seen. */
  models: string;
  /** The known-bad variant of the case's target this scenario must catch. */
  exposes: string;
  /** The check the variant must violate. */
  trips: CheckName;
  /** The crash case, run on the correct queue (no `variant`). */
  case: Omit<CrashCase, 'variant'>;
}

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Checks a scenario's invariants at load time, so a typo fails loudly rather than a gate passing vacuously. */
export function defineScenario(s: Scenario): Scenario {
  if (!NAME.test(s.name)) throw new Error(`scenario name '${s.name}' must be kebab-case (a-z, 0-9, single dashes)`);
  const target = findTarget(s.case.target);
  const names = Object.keys(target.knownBad);
  if (!names.includes(s.exposes)) throw new Error(`scenario ${s.name}: exposes '${s.exposes}', which is not a known variant of ${target.name} (${names.join(', ')})`);
  if (!CHECKS.includes(s.trips)) throw new Error(`scenario ${s.name}: trips '${s.trips}', which is not a check (${CHECKS.join(', ')})`);
  if ('variant' in s.case) throw new Error(`scenario ${s.name}: the case must not name a variant (it runs on the correct queue; --variant adds one)`);
  if (s.case.workload.steps.length === 0) throw new Error(`scenario ${s.name}: the workload has no steps`);
  if (s.case.cut === undefined && !s.case.faults?.length) {
    throw new Error(`scenario ${s.name}: needs a crash point (cut) or faults; without either it only checks a clean shutdown`);
  }
  return Object.freeze(s);
}

/** The scenario's crash case, on the correct queue or on `variant`. */
export function caseOf(s: Scenario, variant?: string): CrashCase {
  return { ...structuredClone(s.case), ...(variant !== undefined ? { variant } : {}) };
}

/** One line: settings, crash point(s), policy and faults, as a reader would say them. */
export function describeCase(c: Omit<CrashCase, 'variant'>): string {
  const point = (p: NonNullable<CrashCase['cut']>) =>
    `${p.timing} the ${ordinal(p.atOp)} ${p.kind ?? 'request'}${p.path ? ` touching ${p.path}` : ''}`;
  const parts = [
    Object.entries(c.settings).map(([k, v]) => `${k}=${v}`).join(' '),
    c.cut ? `cut ${point(c.cut)}, policy ${c.policy}${c.policy === 'torn' ? ` seed ${c.seed}` : ''}` : `cut after the workload stops, policy ${c.policy}`,
    ...(c.faults ?? []).map((f) => `fault ${JSON.stringify(f)}`),
    ...(c.recoverySettings ? [`recovery with ${Object.entries(c.recoverySettings).map(([k, v]) => `${k}=${v}`).join(' ')}`] : []),
    ...(c.recoveryCut ? [`second cut during recovery ${point(c.recoveryCut.cut)}, policy ${c.recoveryCut.policy}`] : []),
  ];
  return parts.join('; ');
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}
