// The replicated queue's driver: node dist/src/targets/powercut-queue/replicated/driver.js, specs on stdin
// (docs/driver-protocol.md, "Clusters"). It is the primary: it starts one replica server per node
// and runs the primary/backup protocol over them (replicated-queue.ts).
import { maxEventBytes } from '../../../queue/format.js';
import { DEFAULT_SETTINGS } from '../../../queue/index.js';
import type { QueueSettings } from '../../../queue/types.js';
import { runNodeDriver } from '../../node-driver.js';
import { queueContract } from '../contract.js';
import { ReplicatedQueue } from './replicated-queue.js';

runNodeDriver({
  target: 'replicated-queue',
  open: (spec, emit) => ReplicatedQueue.open(spec, emit),
  contract: queueContract,
  maxEventBytes: (settings) => maxEventBytes((settings as Partial<QueueSettings>).pageCapacityBytes ?? DEFAULT_SETTINGS.pageCapacityBytes),
});
