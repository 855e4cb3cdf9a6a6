// The scenario registry: every scenario file, in the order `scenario list` and the gate run them.
import type { Scenario } from './scenario.js';
import { scenario as newPageDirNotFsynced } from './new-page-dir-not-fsynced.js';
import { scenario as cutBetweenPageWriteAndCheckpoint } from './cut-between-page-write-and-checkpoint.js';
import { scenario as tornCheckpointWrite } from './torn-checkpoint-write.js';
import { scenario as cutBetweenCheckpointRenameAndDirFsync } from './cut-between-checkpoint-rename-and-dir-fsync.js';
import { scenario as bufferedCheckpointBeforeFlush } from './buffered-checkpoint-before-flush.js';
import { scenario as pageRolledWithoutFlush } from './page-rolled-without-flush.js';
import { scenario as pagePurgedWithPendingWrites } from './page-purged-with-pending-writes.js';
import { scenario as fsyncEioThenRetry } from './fsync-eio-then-retry.js';
import { scenario as enospcMidWrite } from './enospc-mid-write.js';
import { scenario as cutDuringRecovery } from './cut-during-recovery.js';
import { scenario as cutDuringFormatMigration } from './cut-during-format-migration.js';
import { scenario as cutAfterCheckpointUpgrade } from './cut-after-checkpoint-upgrade.js';
import { scenario as backgroundCheckpointEnospc } from './background-checkpoint-enospc.js';

export { caseOf, defineScenario, type Scenario } from './scenario.js';

export const SCENARIOS: readonly Scenario[] = Object.freeze([
  newPageDirNotFsynced,
  cutBetweenPageWriteAndCheckpoint,
  tornCheckpointWrite,
  cutBetweenCheckpointRenameAndDirFsync,
  bufferedCheckpointBeforeFlush,
  pageRolledWithoutFlush,
  pagePurgedWithPendingWrites,
  fsyncEioThenRetry,
  enospcMidWrite,
  cutDuringRecovery,
  cutDuringFormatMigration,
  cutAfterCheckpointUpgrade,
  backgroundCheckpointEnospc,
]);

{
  const seen = new Set<string>();
  for (const s of SCENARIOS) {
    if (seen.has(s.name)) throw new Error(`invariant: scenario name '${s.name}' is registered twice`);
    seen.add(s.name);
  }
}

/** The scenario called `name`; the error lists the valid names. */
export function findScenario(name: string): Scenario {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`unknown scenario '${name}'; valid names: ${SCENARIOS.map((x) => x.name).join(', ')}`);
  return s;
}
