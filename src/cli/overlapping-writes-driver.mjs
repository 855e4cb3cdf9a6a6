// A correct driver whose writes made at once return in reverse order: the built-in queue, with each
// write's answer held back the longer the earlier it was issued. A drain's liveness writes are made
// at once, so its written lines come out of seq order, as a real driver's may. For driver.test.ts
// (plain JavaScript on the built code: test-only, never compiled into the package).
import { runNodeDriver } from '../../dist/src/targets/node-driver.js';
import { DEFAULT_SETTINGS, openQueue } from '../../dist/src/queue/index.js';
import { maxEventBytes } from '../../dist/src/queue/format.js';

let inFlight = 0;
runNodeDriver({
  target: 'overlapping-writes',
  async open(spec) {
    const queue = await openQueue(spec.dir, spec.settings);
    const write = queue.write.bind(queue);
    queue.write = async (data) => {
      const order = inFlight++;
      try {
        const seq = await write(data);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 30 - 10 * order)));
        return seq;
      } finally {
        inFlight--;
      }
    };
    return queue;
  },
  contract: (settings) => ({ replayBound: { ackBatchSize: settings.checkpointAcks ?? DEFAULT_SETTINGS.checkpointAcks, outOfOrderAcksDurable: false } }),
  maxEventBytes: (settings) => maxEventBytes(settings.pageCapacityBytes ?? DEFAULT_SETTINGS.pageCapacityBytes),
});
