// What the NATS target counts of a run, on a stored recording: finding C1's three-node run.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { REPO_ROOT } from '../../harness/dist-path.js';
import { natsWorkloadEvents } from './index.js';

const C1_TRACE = path.join(REPO_ROOT, 'docs/findings/nats/C1-coordinated-cut-loses-pubacks/trace-cut-0.json');

describe('natsWorkloadEvents', () => {
  it('counts a cluster\'s Raft events: each node\'s groups, its term and vote writes, peer state and snapshots', async () => {
    const { trace } = JSON.parse(await readFile(C1_TRACE, 'utf8')) as { trace: TraceEntry[] };
    const events = natsWorkloadEvents(trace);
    const writesOf = (re: RegExp) => trace.filter((e) => e.result === 0 && e.kind === 'write' && re.test(e.path)).length;
    expect(events['Raft term and vote writes']).toBe(writesOf(/\/_js_\/[^/]+\/tav\.idx$/));
    // Three nodes, each with the meta group, the stream's and the consumer's.
    expect(events['Raft groups created']).toBeGreaterThanOrEqual(9);
    expect(events['Raft term and vote writes']).toBeGreaterThanOrEqual(9);
    expect(events['Raft peer state writes']).toBeGreaterThan(0);
    expect(events['Raft snapshots']).toBeGreaterThan(0);
  });

  it('counts no Raft event on one server', () => {
    const trace = [{ op: 1, kind: 'write', path: '/jetstream/$G/streams/POWERCUT/msgs/1.blk', result: 0 } as TraceEntry];
    const events = natsWorkloadEvents(trace);
    expect(events['.blk writes']).toBe(1);
    expect(Object.entries(events).filter(([k, n]) => k.startsWith('Raft') && n > 0)).toEqual([]);
  });
});
