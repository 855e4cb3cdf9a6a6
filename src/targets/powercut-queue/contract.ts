// What the built-in queue promises (README, "Durability contract"), as its driver declares it.
import type { Contract } from '../../harness/contract.js';
import { DEFAULT_SETTINGS } from '../../queue/index.js';
import type { QueueSettings } from '../../queue/types.js';

export function queueContract(settings: Record<string, unknown>): Contract {
  return {
    // In-order acks are checkpointed in batches of checkpointAcks; out-of-order ones once the gap closes.
    replayBound: { ackBatchSize: (settings as Partial<QueueSettings>).checkpointAcks ?? DEFAULT_SETTINGS.checkpointAcks, outOfOrderAcksDurable: false },
    acksConfirmed: true,
    // Records are appended to one page in seq order and recovery stops at the first invalid one.
    unconfirmedWrites: 'suffix',
    // The next seq continues after the last valid record on disk, or after the checkpoint's.
    seqScope: 'forever',
    // One reader takes records from the head page in order.
    deliveryOrder: 'seq',
  };
}
