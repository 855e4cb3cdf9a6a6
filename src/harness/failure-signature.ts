// What makes two failures the same failure, for a gate that keeps exploring after the first one:
// the violated check, the crash policy, and the request at the cut with its path generalised
// (numbers become *), e.g. "at-least-once, torn, after write of /*.log". Pure.
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { CaseResult } from './crash-case.js';

/** What a signature is read from: a judged case, or an artifact of one. */
export type FailedCase = Pick<CaseResult, 'case' | 'runs' | 'cuts' | 'violations'>;
import { errnoName } from '../../fusefs/model/errno.js';
import { pathPattern } from './path-pattern.js';

function request(e: TraceEntry | undefined): string {
  return e === undefined ? 'request' : `${e.kind} of ${pathPattern(e.path)}`;
}

/** Where the (first) power cut of a judged case fell, in words that do not depend on request numbers. */
export function cutPlace(result: FailedCase): string {
  const first = result.cuts[0];
  if (first === undefined) return 'no cut';
  const at = (op: number) => first.trace.find((e) => e.op === op);
  const state = result.case.state;
  // A crash state is the power going just before request afterOp + 1 (for lose-unsynced, the
  // persistence point that did not happen), so that request names where it fell.
  if (state) return state.afterOp >= first.trace.length ? 'at the end of the run' : `before ${request(at(state.afterOp + 1))}`;
  if (first.frozenAt === null) return 'after the run';
  return `${result.case.cut?.timing ?? 'at'} ${request(at(first.frozenAt))}`;
}

/**
 * The faults that fired in a case, in words: what they failed is lost under every policy (keep-all
 * included), so a signature must not read as if the power cut lost it.
 */
function faultsFired(result: FailedCase): string {
  const fired = [...new Set(result.runs.flatMap((r) => r.failedRequests.map((f) => `${f.kind} ${errnoName(-f.result)}`)))];
  return fired.length ? ` after injected ${fired.join(', ')}` : '';
}

/**
 * The signature of a failing case: its first violation that is not a hang (a hang is never the
 * finding when something else failed), its policy (with the faults that fired), and where its cut fell.
 */
export function failureSignature(result: FailedCase): string {
  const v = result.violations.find((x) => !x.hang) ?? result.violations[0];
  if (v === undefined) throw new Error('invariant: failureSignature of a case that did not fail');
  const policy = result.case.state?.policy ?? result.case.policy;
  return `${v.check}${v.hang ? ' (hang)' : ''}, ${policy}${faultsFired(result)}, ${cutPlace(result)}`;
}
