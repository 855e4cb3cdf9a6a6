import { defineScenario } from './scenario.js';
import { write } from './workloads.js';

export const scenario = defineScenario({
  name: 'cut-during-recovery',
  summary: 'a torn record at the tail, then a second power cut during recovery',
  models:
    'The first cut tears a 3000-byte record (torn policy, seed 3: its header sector persists, some data sectors do not). ' +
    'Recovery must drop the torn tail by its CRC; the second cut, right after recovery fsyncs the head page, makes ' +
    'whatever recovery kept permanent. A recovery that trusts records without their CRC delivers garbage. ' +
    'Torn and zeroed tails after power loss (Logstash, Kafka log recovery).',
  exposes: 'no-crc-on-recovery',
  trips: 'integrity',
  case: {
    workload: { steps: [write(1, true), write(1, true, 3000)] },
    settings: { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync', pageCapacityBytes: 65_536, checkpointWrites: 1024, checkpointAcks: 1024 },
    // The 3rd write to page.1 (header, first record, the big record), applied, never answered.
    cut: { atOp: 3, kind: 'write', path: '/page.1', timing: 'after' },
    policy: 'torn',
    seed: 3,
    recoveryCut: { cut: { atOp: 1, kind: 'fsync', path: '/page.1', timing: 'after' }, policy: 'lose-unsynced', seed: 1 },
  },
});
