// The cause of any failing case (pure): the cause search's, when one ran; else what the case itself
// says. An injected fault that fired and that the queue did not report is the cause (a swallowed
// error); a write that failed part-way and was reported, yet left the disk unrecoverable, is a torn
// write; damage read at recovery that the queue trusted is named; anything else (a case the search
// could not take) groups by its signature alone.
import type { CaseResult } from '../crash-run.js';
import { errnoName } from '../../../fusefs/model/errno.js';
import { failureSignature, type FailedCase } from '../failure-signature.js';
import { pathPattern } from '../path-pattern.js';
import type { Cause } from './cause.js';

const NO_SEARCH = { probes: 0, ms: 0, bound: { maxProbes: 0, maxMs: 0 }, boundReached: false };

/** The key of every failure that needs a second cut during recovery: one group, whatever cut it. */
export const SECOND_CUT_KEY = 'not-isolated second-cut';

export function causeOfCase(result: FailedCase & Pick<CaseResult, 'cause'>): Cause {
  if (result.cause) return result.cause;
  const checks = new Set(result.violations.filter((v) => !v.hang).map((v) => v.check));
  const failed = result.runs.flatMap((r, k) => r.failedRequests.map((f) => ({ ...f, run: k })));
  if ((result.case.faults?.length ?? 0) > 0 && failed.length > 0) {
    const f = failed[0];
    const errno = errnoName(-f.result);
    // The queue reported the failure and confirmed nothing after it, yet cannot recover: the write
    // that failed part-way was an overwrite in place, and the disk holds neither version.
    const reported = !checks.has('fail-loudly') && !result.violations.some((v) => v.promise);
    if (reported && f.kind === 'write') {
      return {
        kind: 'torn-write',
        key: `torn-write ${pathPattern(f.path)} unrecoverable`,
        title: `a torn write of ${pathPattern(f.path)} leaves it unrecoverable`,
        fix: `request ${f.op} (write of ${f.path}) failed with ${errno} part-way, and the queue reported it, but recovery found neither the old nor the new version (an overwrite in place); write the new version to a new file and rename it over the old one`,
        evidence: [`run ${f.run}: the filesystem failed request ${f.op} (write ${f.path}: ${errno}) as the injected fault asked; the queue reported it and confirmed nothing after it`],
        search: NO_SEARCH,
      };
    }
    const lie = result.violations.find((v) => v.check === 'at-least-once' && v.promise);
    const confirmed = lie?.promise ? `, and line ${lie.promise.line} of run ${lie.promise.run} confirmed as durable what it never persisted` : '';
    return {
      kind: 'swallowed-error',
      key: `swallowed-error ${f.kind} ${pathPattern(f.path)} ${errno}`,
      title: `an injected ${f.kind} ${errno} on ${pathPattern(f.path)} the queue did not report`,
      fix: `when request ${f.op} (${f.kind} of ${f.path}) fails with ${errno}, fail that call and every later one, and never confirm what it did not persist${checks.has('fail-loudly') ? ' (the queue reported no error at all)' : ''}${confirmed}`,
      evidence: [`run ${f.run}: the filesystem failed request ${f.op} (${f.kind} ${f.path}: ${errno}) as the injected fault asked`],
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
