// Public entry point of the queue under test.
export type { CheckpointDesign, DurabilityState, PageWriteDesign, PersistentQueue, QueueEvent, QueueSettings } from './types.js';
export { openQueue, Queue } from './queue.js';
export { DEFAULT_SETTINGS, validateSettings } from './settings.js';
export { DiskOps } from './ops.js';
export { PageWriter, WRITE_BUFFER_BYTES } from './page.js';
export {
  BackpressureTimeoutError,
  DamagedQueueError,
  EventTooLargeError,
  FormatError,
  QueueError,
  QueueIOError,
  QueueLockedError,
  QueueUsageError,
  SettingsError,
} from './errors.js';
