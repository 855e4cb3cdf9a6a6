// The documented bound on duplicate replay after a power cut (docs/queue.md, "Durability contract").

/**
 * Most acked events that can be delivered again after a power cut.
 * - checkpointAcks - 1: in-order acks below the threshold are not yet checkpointed;
 * - largestAckCallSize: the ack call that reaches the threshold waits for its checkpoint, but its
 *   events are acked (and lost with the power) until that checkpoint is durable;
 * - outOfOrderAcks: events acked while a lower delivered seq was still unacked; a checkpoint can
 *   only record a single first-unacked seq, so those acks are not durable until the gap closes.
 */
export function maxReplayedAcks(checkpointAcks: number, largestAckCallSize: number, outOfOrderAcks: number): number {
  for (const [name, value, min] of [
    ['checkpointAcks', checkpointAcks, 1],
    ['largestAckCallSize', largestAckCallSize, 0],
    ['outOfOrderAcks', outOfOrderAcks, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) throw new RangeError(`maxReplayedAcks: ${name} must be an integer >= ${min}, got ${value}`);
  }
  return checkpointAcks - 1 + largestAckCallSize + outOfOrderAcks;
}
