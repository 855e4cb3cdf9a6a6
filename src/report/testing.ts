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

/**
 * A three-node cluster (the replicated queue's shape): each node's server starts (node lines 2–4),
 * every write goes to every node's /page.1 and is fsynced there, and a confirmation follows a
 * majority's fsyncs. Node 1's power is cut before request 17 (its second page write, never
 * applied) while nodes 0 and 2 run on; node 1 is restarted after request 21 (line 10) and the run
 * goes on to request 32. 'mixed-state': instead, the recorded run's mixed crash state after
 * request 16 with node 0's power gone (the others lost only their processes): node 0's write 13
 * is lost, node 2's write 14 kept.
 */
export function clusterArtifact(kind: 'live-one-node' | 'mixed-state' = 'live-one-node'): ReportArtifact {
  const trace: TraceEntry[] = [];
  const add = (node: number, e: Omit<TraceEntry, 'op' | 'state' | 'result' | 'node'> & Partial<TraceEntry>) => trace.push({ op: trace.length + 1, state: 'applied', result: 0, node, ...e });
  const marks: { n: number; afterOp: number }[] = [];
  const lines: Outcome[] = [];
  const line = (o: Outcome) => {
    lines.push(o);
    marks.push({ n: lines.length, afterOp: trace.length });
  };
  line(HELLO);
  for (const node of [0, 1, 2]) line({ t: 'node', node, pgid: 4100 + node });
  for (const node of [0, 1, 2]) add(node, { kind: 'create', path: '/page.1' });
  for (const node of [0, 1, 2]) add(node, { kind: 'fsyncdir', path: '/' });
  line({ t: 'open', durableSeq: 0, durableFirstUnackedSeq: 1 });
  // Event 1: written on every node, fsynced on 0 and 2 (a majority), then confirmed.
  line({ t: 'write-intent', id: 1, size: 100 });
  for (const node of [0, 1, 2]) add(node, { kind: 'write', path: '/page.1', offset: 0, length: 120 });
  for (const node of [0, 2, 1]) add(node, { kind: 'fsync', path: '/page.1' });
  line({ t: 'written', id: 1, seq: 1 });
  // Event 2 (requests 13–): written on every node; node 1's power goes before its write.
  line({ t: 'write-intent', id: 2, size: 100 });
  add(0, { kind: 'write', path: '/page.1', offset: 120, length: 120 });
  add(2, { kind: 'write', path: '/page.1', offset: 120, length: 120 });
  add(0, { kind: 'setattr', path: '/page.1' });
  add(2, { kind: 'setattr', path: '/page.1' });
  add(1, { kind: 'write', path: '/page.1', offset: 120, length: 120, ...(kind === 'live-one-node' ? { state: 'held', result: undefined } : {}) });
  const cutAt = trace.length; // 17
  add(0, { kind: 'fsync', path: '/page.1' });
  add(2, { kind: 'fsync', path: '/page.1' });
  line({ t: 'written', id: 2, seq: 2 });
  add(0, { kind: 'create', path: '/checkpoint.tmp' });
  add(0, { kind: 'rename', path: '/checkpoint.tmp', path2: '/checkpoint' });
  if (kind === 'live-one-node') line({ t: 'node', node: 1, pgid: 4201, restarted: true });
  // Node 1 back: it catches up (its page rewritten and fsynced), event 3 on all three.
  add(1, { kind: 'write', path: '/page.1', offset: 120, length: 120 });
  add(1, { kind: 'fsync', path: '/page.1' });
  line({ t: 'write-intent', id: 3, size: 100 });
  for (const node of [0, 1, 2]) add(node, { kind: 'write', path: '/page.1', offset: 240, length: 120 });
  for (const node of [1, 2, 0]) add(node, { kind: 'fsync', path: '/page.1' });
  line({ t: 'written', id: 3, seq: 3 });
  for (const node of [0, 1, 2]) add(node, { kind: 'fsyncdir', path: '/' });
  const drain: Outcome[] = [HELLO, ...[0, 1, 2].map((node): Outcome => ({ t: 'node', node, pgid: 5100 + node })), { t: 'open', durableSeq: 3, durableFirstUnackedSeq: 1 }, { t: 'delivered', seq: 1, id: 1, size: 100, crc: 1 }, { t: 'delivered', seq: 3, id: 3, size: 100, crc: 3 }, { t: 'drained', count: 2 }, { t: 'done' }];
  const workload = { steps: [{ op: 'write', sizesBytes: [100, 100, 100] }] } as unknown as Workload;
  const common = { workload, settings: {}, variant: 'async-replication', policy: 'lose-unsynced' as const, seed: 1, nodes: 3 };
  const c = kind === 'live-one-node'
    ? { ...common, cut: { atOp: cutAt, timing: 'before' as const }, nodesCut: [1] }
    : { ...common, state: { afterOp: cutAt - 1, policy: 'lose-unsynced' as const, nodes: [0] } };
  return {
    dir: `/tmp/artifacts/cluster-${kind}`,
    case: c,
    runs: [
      { role: 'workload', outcomes: lines, exitCode: 0, killed: false, hung: false, failedRequests: [] },
      { role: 'drain', outcomes: drain, exitCode: 0, killed: false, hung: false, failedRequests: [] },
    ],
    cuts: [{ frozenAt: kind === 'live-one-node' ? cutAt : null, trace, marks }],
    violations: [{ check: 'at-least-once', seqs: [2], ids: [2], message: 'at-least-once: seqs 2 (event ids 2) were confirmed durable and never acked, but were not delivered after recovery' }],
    stderr: ['', ''],
    images: [{}],
  };
}
