// The daemon's `states` listing on a write-ahead-log workload, measured on the model alone (no
// mount): each segment created, extended to its size by ftruncate (preallocation) or not, then
// appended to with an fsync after each record; a new segment once one is full of records.
// bench:crash prints it beside the same workload without preallocation.
import { DEFAULT_STATE_CAPS, type StatePolicy } from '../fusefs/crash-states.js';
import { Recording, RecordingFsModel } from '../fusefs/model/recording.js';
import { StateSpace } from '../fusefs/model/state-space.js';

export interface WalShape {
  segments: number;
  recordsPerSegment: number;
  recordBytes: number;
  /** Each segment's preallocated size (0: not preallocated, it grows with its records). */
  preallocateBytes: number;
}

/** The WAL workload recorded into a state space, as the daemon holds it once `states` is asked. */
export function recordWal(shape: WalShape): StateSpace {
  const owner = { uid: 0, gid: 0 };
  const recording = new Recording(owner, 1 << 30);
  let op = 0;
  const m = new RecordingFsModel(recording, () => op);
  for (let s = 0; s < shape.segments; s++) {
    op++;
    const ino = m.create(`/wal-${s}`, 0o644, owner);
    if (shape.preallocateBytes > 0) {
      op++;
      m.truncate(ino, shape.preallocateBytes);
    }
    for (let r = 0; r < shape.recordsPerSegment; r++) {
      op++;
      m.write(ino, r * shape.recordBytes, Buffer.alloc(shape.recordBytes, 1 + ((s * 31 + r) % 250)));
      op++;
      m.fsync(ino);
    }
  }
  recording.close();
  return new StateSpace(recording, op);
}

/** The `states` request's work on `shape`: milliseconds and states listed. */
export function timeStates(shape: WalShape, policies: readonly StatePolicy[] = ['lose-unsynced', 'torn']): { ms: number; states: number } {
  const space = recordWal(shape);
  const t0 = performance.now();
  const answer = space.enumerate(policies, DEFAULT_STATE_CAPS);
  return { ms: performance.now() - t0, states: answer.states.length };
}

if (process.argv[1]?.endsWith('wal-states.js')) {
  const base = { segments: 2, recordsPerSegment: 40, recordBytes: 4096 };
  for (const preallocateBytes of [0, 64 << 20]) {
    const r = timeStates({ ...base, preallocateBytes });
    console.log(`states listing, ${base.segments} segments x ${base.recordsPerSegment} records of ${base.recordBytes} B, preallocated ${preallocateBytes >> 20} MiB: ${r.states} states in ${r.ms.toFixed(0)} ms`);
  }
}
