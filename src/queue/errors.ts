// Every error the queue raises names what is wrong and where, so a user never sees a bare stack trace.

export class QueueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A setting outside its allowed range (or an unknown setting). */
export class SettingsError extends QueueError {}

/** An event that can never fit in one page. */
export class EventTooLargeError extends QueueError {}

/** Another live process holds the queue directory. */
export class QueueLockedError extends QueueError {
  constructor(
    readonly dir: string,
    readonly holderPid: number,
  ) {
    super(`queue ${dir} is locked by process ${holderPid} (lock file ${dir}/lock); close that queue first`);
  }
}

/** Data that was synced (so must be intact) is not: needs `powercut queue repair`. */
export class DamagedQueueError extends QueueError {
  constructor(
    readonly file: string,
    readonly offsetBytes: number,
    readonly reason: string,
  ) {
    super(`queue damaged where synced: ${file} at offset ${offsetBytes}: ${reason} (run 'powercut queue repair ${dirOf(file)}')`);
  }
}

/** A write or fsync failed: the queue stops; nothing not persisted is ever reported durable. */
export class QueueIOError extends QueueError {
  constructor(
    readonly file: string,
    readonly operation: string,
    readonly errno: string,
    cause?: unknown,
  ) {
    super(`${operation} failed on ${file}: ${errno}; the queue has stopped, reopen it to recover from disk`);
    if (cause !== undefined) this.cause = cause;
  }
}

/** A writer waited longer than writeTimeoutMs for space under backpressure. */
export class BackpressureTimeoutError extends QueueError {}

/** A call made after close() or with an argument the queue state does not allow. */
export class QueueUsageError extends QueueError {}

/** An on-disk format this version cannot open (unknown version, downgrade). */
export class FormatError extends QueueError {}

function dirOf(file: string): string {
  const slash = file.lastIndexOf('/');
  return slash > 0 ? file.slice(0, slash) : '.';
}
