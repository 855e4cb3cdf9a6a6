// Hand-made artifacts shared by the report's tests (the pure ones and the browser one). Test code:
// no runtime module imports it (src/layout.test.ts checks that).
import type { TraceEntry } from '../../fusefs/protocol.js';
import type { Outcome } from '../harness/outcome.js';
import type { Workload } from '../harness/workload.js';
import type { ReportArtifact } from './types.js';

const HELLO: Outcome = { t: 'hello', protocol: 1, target: 'powercut-queue', replayBound: { ackBatchSize: 1, outOfOrderAcksDurable: false } };
const bytes = (s: string) => new TextEncoder().encode(s);

/**
 * A queue that pre-allocates `files` files of 50 requests each (a create, 48 writes, an fsync:
 * `files * 50` requests far from anything that matters), fsyncs their directory, then claims seq 1
 * durable after writing its page but before any fsync of it; the power is cut before that fsync.
 * With the default 10 files: requests 1–500 pre-allocate, 501 fsyncs the directory, 502 creates
 * /page.1, 503 fsyncs the directory, 504 writes event 1, 505 renames the checkpoint, and the cut
 * comes before 506 (the page's fsync). The evidence: the write (504), the directory fsync before
 * the claim (503), the written line (4, after 504) and the claim (line 5, after 504).
 */
export function preallocatedArtifact(files = 10): ReportArtifact {
  const trace: TraceEntry[] = [];
  const add = (e: Omit<TraceEntry, 'op' | 'state' | 'result'> & Partial<TraceEntry>) => trace.push({ op: trace.length + 1, state: 'applied', result: 0, ...e });
  for (let f = 0; f < files; f++) {
    add({ kind: 'create', path: `/pre.${f}` });
    for (let w = 0; w < 48; w++) add({ kind: 'write', path: `/pre.${f}`, offset: w * 4096, length: 4096 });
    add({ kind: 'fsync', path: `/pre.${f}` });
  }
  add({ kind: 'fsyncdir', path: '/' });
  const base = trace.length; // 501 with 10 files
  add({ kind: 'create', path: '/page.1' });
  add({ kind: 'fsyncdir', path: '/' });
  add({ kind: 'write', path: '/page.1', offset: 0, length: 120 });
  add({ kind: 'rename', path: '/cp.tmp', path2: '/checkpoint' });
  add({ kind: 'fsync', path: '/page.1', state: 'held', result: undefined });
  const cutAt = trace.length;
  const workload: Outcome[] = [HELLO, { t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 }, { t: 'write-intent', id: 1, size: 100 }, { t: 'written', id: 1, seq: 1 }, { t: 'durable', durableSeq: 1, durableFirstUnackedSeq: 1 }];
  const drain: Outcome[] = [HELLO, { t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 }, { t: 'drained', count: 0 }, { t: 'done' }];
  return {
    dir: '/tmp/artifacts/preallocated-late-claim',
    case: { workload: { steps: [{ op: 'write', sizesBytes: [100] }] } as unknown as Workload, settings: {}, variant: 'fsync-claims-late-writes', cut: { atOp: cutAt, timing: 'before' }, policy: 'lose-unsynced', seed: 1 },
    runs: [
      { role: 'workload', outcomes: workload, exitCode: null, killed: true, hung: false, failedRequests: [] },
      { role: 'drain', outcomes: drain, exitCode: 0, killed: false, hung: false, failedRequests: [] },
    ],
    cuts: [{ frozenAt: cutAt, trace, marks: [{ n: 1, afterOp: 0 }, { n: 2, afterOp: base + 2 }, { n: 3, afterOp: base + 2 }, { n: 4, afterOp: base + 3 }, { n: 5, afterOp: base + 3 }] }],
    violations: [{ check: 'at-least-once', seqs: [1], ids: [1], message: 'at-least-once: seqs 1 (event ids 1) were confirmed durable and never acked, but were not delivered after recovery' }],
    stderr: ['', ''],
    images: [{ live: new Map([['page.1', { kind: 'file', sizeBytes: 120, bytes: bytes('A'.repeat(120)) }]]), durable: new Map(), afterCrash: new Map() }],
  };
}
