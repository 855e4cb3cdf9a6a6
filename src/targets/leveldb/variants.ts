// The leveldb target's known-bad variants (known-bad.ts), as switches of the queue.
import type { LevelQueueFaults } from './queue.js';
import { KNOWN_BAD } from './known-bad.js';

export function variantFaults(name: string): LevelQueueFaults {
  if (!KNOWN_BAD[name]) throw new Error(`'${name}' is not a known variant of target leveldb; valid names: ${Object.keys(KNOWN_BAD).join(', ')}`);
  switch (name) {
    case 'claims-unsynced-durable':
      return { claimUnsyncedDurable: true };
    case 'trusts-leveldb-create':
      // RepairDB would also rebuild the database this leaves unopenable: this variant opens LevelDB as it is.
      return { trustLevelDbCreate: true, noRepair: true };
    case 'trusts-leveldb-log-roll':
      return { trustLevelDbLogRoll: true };
    case 'no-repair':
      return { noRepair: true };
    default:
      throw new Error(`invariant: variant '${name}' has no implementation`);
  }
}
