// The cause of any failing case (pure): the cause search's, when one ran; else what the case itself
// proves. An injected fault that fired is the cause only when the run shows the queue went on as if
// it had not (no error reported, or a confirmation after it that was then lost): a swallowed error.
// Damage read at recovery that the queue trusted is named; anything else (a fault the queue reported,
// a case the search could not take) is unexplained and groups by its signature alone.
import type { CaseResult } from '../crash-case.js';
import { errnoName } from '../../../fusefs/model/errno.js';
import { failureSignature, type FailedCase } from '../failure-signature.js';
import { pathPattern } from '../path-pattern.js';
import type { Cause } from './cause.js';

const NO_SEARCH = { probes: 0, ms: 0, bound: { maxProbes: 0, maxMs: 0 }, boundReached: false };

/** The key of every failure that needs a second cut during recovery: one group, whatever cut it. */
export const SECOND_CUT_KEY = 'not-isolated second-cut';

/** Why a failure has no cause when the budget for explaining it ended first, in the words the summary shows. */
export const BUDGET_RAN_OUT = 'unexplained: the budget ran out before its cause was proven';

/** A failing case the budget left no time to explain: unexplained, grouped by its signature (never given an unproven cause). */
export function budgetRanOut(result: FailedCase): Cause {
  const signature = failureSignature(result);
  return { kind: 'not-isolated', key: `unexplained ${signature}`, title: `unexplained: ${signature}`, fix: BUDGET_RAN_OUT, evidence: [], search: NO_SEARCH };
}

/**
 * What proves a swallowed error, in words: the queue reported no error at all in the run whose
 * request failed (fail-loudly), or, with no error line before it, a line of that run confirmed as
 * durable what was then lost (the at-least-once violation's promise).
 */
function swallowProof(result: FailedCase, f: { run: number; op: number; kind: string; path: string }, errno: string): string | undefined {
  const failedWords = `request ${f.op} (${f.kind} of ${f.path}) failed with ${errno}`;
  if (result.violations.some((v) => v.check === 'fail-loudly')) return `${failedWords}, and the run that made it reported no error at all (fail-loudly)`;
  const lie = result.violations.find((v) => v.check === 'at-least-once' && v.promise?.run === f.run);
  if (!lie?.promise) return undefined;
  const outcomes = result.runs[f.run]?.outcomes ?? [];
  const errorLine = outcomes.findIndex((o) => o.t === 'error');
  if (errorLine >= 0 && errorLine < lie.promise.line - 1) return undefined;
  const line = outcomes[lie.promise.line - 1];
  return `${failedWords}; the queue printed no error before line ${lie.promise.line} of that run (${JSON.stringify(line)}), which confirmed as durable what the recovery then lost`;
}

export function causeOfCase(result: FailedCase & Pick<CaseResult, 'cause'>): Cause {
  if (result.cause) return result.cause;
  const checks = new Set(result.violations.filter((v) => !v.hang).map((v) => v.check));
  const failed = result.runs.flatMap((r, k) => r.failedRequests.map((f) => ({ ...f, run: k })));
  if ((result.case.faults?.length ?? 0) > 0 && failed.length > 0) {
    const f = failed[0];
    const errno = errnoName(-f.result);
    const failedWords = `the filesystem failed request ${f.op} (${f.kind} of ${f.path}) with ${errno}, as the injected fault asked`;
    const proof = swallowProof(result, f, errno);
    if (proof) {
      return {
        kind: 'swallowed-error',
        key: `swallowed-error ${f.kind} ${pathPattern(f.path)} ${errno}`,
        title: `an injected ${f.kind} ${errno} on ${pathPattern(f.path)} the queue did not report`,
        fix: `when request ${f.op} (${f.kind} of ${f.path}) fails with ${errno}, fail that call and every later one, and never confirm what it did not persist`,
        proven: proof,
        evidence: [`run ${f.run}: ${failedWords}`],
        search: NO_SEARCH,
      };
    }
    // The queue reported the failure, or nothing it confirmed after it was lost: the fault is not shown
    // to be the cause (a torn write it reported, or another bug the run met), and a fault's state is not probed.
    const signature = failureSignature(result);
    return {
      kind: 'not-isolated',
      key: `unexplained ${signature}`,
      title: `unexplained: ${signature}`,
      fix: `no proven cause: ${failedWords}, but no line the queue printed after it claimed what it failed, and the state a fault leaves is not probed`,
      evidence: [`run ${f.run}: ${failedWords}`],
      search: NO_SEARCH,
    };
  }
  const damage = result.case.recoveryFaults?.[0];
  if (damage && 'path' in damage && 'offset' in damage) {
    const check = [...checks].sort().join(',');
    return {
      kind: 'damaged-data-trusted',
      key: `damaged-data-trusted ${damage.type} ${pathPattern(damage.path)} ${check}`,
      title: `a ${damage.type} of ${pathPattern(damage.path)} read at recovery, not reported (${check})`,
      fix: `when recovery reads damaged bytes of ${damage.path} (${damage.type} at offset ${damage.offset}), report the damage instead of ${checks.has('integrity') ? 'delivering them' : 'dropping or skipping durable records silently'}`,
      proven: `the recoveries read ${damage.path} damaged by the injected ${damage.type} at offset ${damage.offset}, reported no damage, and failed ${check}`,
      evidence: [`the disk the recoveries read was damaged by ${JSON.stringify(damage)}`],
      search: NO_SEARCH,
    };
  }
  if (result.case.recoveryCut) {
    // As exhaustive mode's recovery-cut states: what the recovery did before its cut is not recorded to probe.
    return {
      kind: 'not-isolated', key: SECOND_CUT_KEY, title: 'cause not isolated: the failure needs the cut during recovery',
      fix: 'not isolated: the failure needs its second cut, during recovery, and what the recovery did before that cut is not recorded to probe; replay the artifact to see it fail',
      evidence: [], search: NO_SEARCH,
    };
  }
  const signature = failureSignature(result);
  return {
    kind: 'not-isolated',
    key: `not-searched ${signature}`,
    title: signature,
    fix: 'not searched: the case could not be recorded again with its crash state (a second cut during recovery, settings changed after the cut, or the state no longer fails the same way); it groups by its signature',
    evidence: [],
    search: NO_SEARCH,
  };
}
