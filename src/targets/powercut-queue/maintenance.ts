// The built-in queue's maintenance, for `powercut queue inspect|repair`: the CLI reaches the queue
// (src/queue/) only through its target, which is the one module that imports it.
export { inspectQueue, type QueueReport } from '../../queue/inspect.js';
export { repairQueue, type RepairReport } from '../../queue/repair.js';
