// The built-in queue's driver: node dist/src/targets/powercut-queue/driver.js, specs on stdin
// (docs/driver-protocol.md). Its own process, so the harness can SIGKILL it at a power cut.
import { DEFAULT_SETTINGS, openQueue } from '../../queue/index.js';
import type { QueueSettings } from '../../queue/types.js';
import { maxEventBytes } from '../../queue/format.js';
import { runNodeDriver } from '../node-driver.js';
import { queueContract } from './contract.js';

runNodeDriver({
  target: 'powercut-queue',
  async open(spec) {
    const settings = spec.settings as Partial<QueueSettings>;
    if (spec.variant === undefined) return openQueue(spec.dir, settings);
    // Loaded only when asked for: production runs never import the known-bad variants.
    const variants = await import('./variants.js');
    return variants.openQueueVariant(spec.variant, spec.dir, settings);
  },
  contract: queueContract,
  maxEventBytes: (settings) => maxEventBytes((settings as Partial<QueueSettings>).pageCapacityBytes ?? DEFAULT_SETTINGS.pageCapacityBytes),
});
