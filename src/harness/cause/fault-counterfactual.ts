// Whether an injected fault is what a failing case met. A swallowed error (a fault the queue did not
// report) is the cause of a loss only if the confirmation it blames was false (what it claimed is not
// on the disk recovery started from: claim-on-disk.ts; a true one means recovery lost the record),
// and only if the same case run again without the fault does not fail the same checks; otherwise
// another bug (a logic error, say) fails the run, fault or not.
import { runCase } from '../crash-run.js';
import type { CaseResult } from '../crash-case.js';
import type { DaemonHandle } from '../daemon-process.js';
import { failureSignature } from '../failure-signature.js';
import type { Target } from '../target.js';
import type { Cause } from './cause.js';
import { claimOnDisk } from './claim-on-disk.js';

/** `swallowed` (a fault case's cause read off its result) checked against the same case without its faults. */
export async function checkSwallowedError(daemon: DaemonHandle, target: Target, result: CaseResult, swallowed: Cause): Promise<Cause> {
  if (swallowed.kind !== 'swallowed-error') throw new Error(`invariant: only a swallowed error is checked against its case without faults, not ${swallowed.kind}`);
  const signature = failureSignature(result);
  // A queue that reported no error at all broke its contract whatever the disk holds; a loss after an unreported fault is the fault's only if the claim was false.
  if (!result.violations.some((v) => v.check === 'fail-loudly')) {
    const onDisk = await claimOnDisk(result);
    if (onDisk && onDisk.found.length > 0 && onDisk.missing.length === 0) {
      const where = onDisk.found.map((x) => `event ${x.id} in ${x.file}`).join(', ');
      return {
        kind: 'not-isolated', key: `unexplained ${signature}`, title: `unexplained: ${signature}`,
        fix: `no proven cause: the confirmation the lost events broke was true (${where}, on the disk recovery started from), so the unreported fault did not lose them: recovery did, and a fault's state is not probed`,
        evidence: [...swallowed.evidence, `the lost events' bytes are on the disk recovery started from: ${where}`], search: swallowed.search,
      };
    }
  }
  const { faults: _faults, ...withoutFaults } = result.case;
  const again = await runCase(daemon, target, withoutFaults, { writeArtifacts: false, captureImages: false });
  const checks = new Set(result.violations.filter((v) => !v.hang).map((v) => v.check));
  const same = [...new Set(again.violations.filter((v) => !v.hang && checks.has(v.check)).map((v) => v.check))];
  if (same.length === 0) return { ...swallowed, proven: `${swallowed.proven}; the same case without the injected fault passes those checks` };
  // Not the swallowed error with its kind changed: its proof does not hold, so none is carried over.
  return {
    kind: 'not-isolated',
    key: `unexplained ${signature}`,
    title: `unexplained: ${signature}`,
    fix: `no proven cause: ${swallowed.proven ?? swallowed.title}, but the same case without the injected fault fails ${same.join(', ')} too: the fault is not shown to be the cause`,
    evidence: [...swallowed.evidence, `without the fault: ${again.violations.find((v) => checks.has(v.check))?.message ?? ''}`],
    search: swallowed.search,
  };
}
