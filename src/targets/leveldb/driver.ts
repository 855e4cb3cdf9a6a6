// The leveldb target's driver: node dist/src/targets/leveldb/driver.js, specs on stdin
// (docs/driver-protocol.md). Its own process, so the harness can SIGKILL it at a power cut.
import { MAX_EVENT_BYTES } from '../../harness/workload.js';
import { runNodeDriver } from '../node-driver.js';
import { LevelQueue } from './queue.js';
import { levelContract } from './settings.js';

runNodeDriver({
  target: 'leveldb',
  async open(spec) {
    if (spec.variant === undefined) return LevelQueue.open(spec.dir, spec.settings);
    // Loaded only when asked for: production runs never import the known-bad variants.
    const { variantFaults } = await import('./variants.js');
    return LevelQueue.open(spec.dir, spec.settings, variantFaults(spec.variant));
  },
  contract: levelContract,
  maxEventBytes: () => MAX_EVENT_BYTES,
});
