// The report of a cluster's artifact: one lane group per node (its process, its directory entries,
// its files), each node's cut and restart marked, the driver's confirmations on the shared axis;
// a single disk's report has none of it.
import { describe, expect, it } from 'vitest';
import { renderArtifactReport } from './artifact-report.js';
import { clusterArtifact, preallocatedArtifact } from './testing.js';

/** The lane labels of cut 1's default chart, top to bottom. */
function laneLabels(html: string): string[] {
  const labels = /<svg class="tl-labels"[^]*?<\/svg>/.exec(html)![0];
  return [...labels.matchAll(/<text class="lane-label[^"]*"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
}

describe('a cluster artifact\'s report', () => {
  it('draws a lane group per node, in node order, with the program\'s lines below them on the shared axis', () => {
    const html = renderArtifactReport(clusterArtifact());
    expect(laneLabels(html)).toEqual([
      'node 0', 'directory entries', '/page.1', '/checkpoint.tmp', '/checkpoint',
      'node 1', 'directory entries', '/page.1',
      'node 2', 'directory entries', '/page.1',
      'program: run 0 (workload)',
    ]);
    // Every request in its node's name space: node 1's write at the cut is node 1's /page.1.
    expect(html).toMatch(/request 17 write \/node1\/page\.1 offset 120 length 120/);
    // The confirmations stay on the one axis, placed by their marks.
    expect(html).toMatch(/<g class="line t-written[^"]*" data-ref="r0-l9"/);
  });

  it('marks the cut node\'s power cut on its group only, and its restart while the run went on', () => {
    const html = renderArtifactReport(clusterArtifact());
    expect(html).toMatch(/<g class="cut some-nodes" id="svg-cut-0" data-nodes="1">(<line [^>]*\/>){1}<path/);
    expect(html).toContain('power cut: node 1</text>');
    expect(html).toContain('power cut before request 17 (it is not applied), on node 1 of 3, the others running on');
    expect(html).toMatch(/<g class="node-cut" data-node="1">/);
    expect(html).not.toMatch(/<g class="node-cut" data-node="[02]">/);
    expect(html).not.toContain('class="node-killed"');
    expect((html.match(/<g class="node-event started" data-node="\d"/g) ?? []).length).toBe(3);
    expect(html).toMatch(/<g class="node-event restarted" data-node="1"[^>]*><circle[^>]*\/><text[^>]*>restarted<\/text><title>node 1 restarted on its crashed disk \(process group 4201\): line 10, after request 21/);
    // Requests after the cut ran: node 0's fsync right after it is applied, and node 1's held write is not.
    expect(html).toMatch(/<g class="req k-fsync" data-ref="c0-op18"/);
    expect(html).toMatch(/<g class="req k-write held not-applied" data-ref="c0-op17"/);
  });

  it('in a mixed crash state draws the cut node\'s cut and says the others kept their unsynced changes', () => {
    const html = renderArtifactReport(clusterArtifact('mixed-state'));
    expect(html).toContain('data-nodes="0"');
    expect(html).toContain('on node 0 of 3, the others losing only their processes');
    // Every node's process ends at the cut: node 0's power went, nodes 1 and 2 lost their processes.
    expect(html).toMatch(/<g class="node-cut" data-node="0">/);
    expect((html.match(/<g class="node-killed" data-node="[12]">/g) ?? []).length).toBe(2);
    // Node 2's unsynced write of event 2 is kept (its process only was lost); node 0's is lost.
    expect(html).toMatch(/<tr class="req-row k-write[^"]*" id="c0-op14"[^]*?unsynced at the cut: <strong class="fate-kept">kept<\/strong> \(node 2 lost only its process/);
    expect(html).toMatch(/<tr class="req-row k-write[^"]*" id="c0-op13"[^]*?unsynced at the cut: <strong class="fate-lost">lost<\/strong>/);
    expect(html).toContain('crash state after request 16, lose-unsynced, the power of node 0 (the others lost only their processes)');
  });

  it('names each cut node\'s own outcome in a torn state', () => {
    const a = clusterArtifact('mixed-state');
    a.case = { ...a.case, state: { afterOp: 16, policy: 'torn', nodes: [0], outcomes: [{ node: 0, dirPrefix: 0, data: { kind: 'except', write: 1 } }] } };
    const html = renderArtifactReport(a);
    expect(html).toContain('torn, node 0: the first 0 unsynced directory operations kept; unsynced write 1 lost');
    expect(html).toMatch(/id="c0-op13"[^]*?unsynced at the cut: <strong class="fate-maybe">may be lost<\/strong> \(torn, node 0:/);
    expect(html).toMatch(/id="c0-op14"[^]*?<strong class="fate-kept">kept<\/strong> \(node 2 lost only its process/);
  });

  it('leaves a single disk\'s report as it was: no node lanes', () => {
    const html = renderArtifactReport(preallocatedArtifact(1));
    expect(html).not.toMatch(/class="lane-bg[^"]*node-head/);
    expect(html).not.toContain('data-nodes=');
    expect(laneLabels(html)[0]).toBe('directory entries');
  });
});
