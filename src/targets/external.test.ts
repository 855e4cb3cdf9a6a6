// An external driver is a single-disk target, or with `nodes` a cluster of that many (gate --nodes).
import { describe, expect, it } from 'vitest';
import { externalTarget, MAX_DRIVER_NODES } from './external.js';
import { nodeCountOf, resolveTarget } from './index.js';

describe('externalTarget', () => {
  it('runs on one disk without nodes, and as a cluster of N nodes with them', () => {
    expect(nodeCountOf(externalTarget({ command: 'python3 d.py', cwd: '/x' }))).toBe(1);
    const cluster = resolveTarget({ driver: { command: 'python3 d.py', cwd: '/x', nodes: 3 } });
    expect(nodeCountOf(cluster)).toBe(3);
    expect(cluster.summary).toBe("the driver 'python3 d.py' (in /x), a cluster of 3 nodes");
  });

  it('refuses a node count out of its range, naming --nodes', () => {
    for (const nodes of [1, MAX_DRIVER_NODES + 1, 2.5]) {
      expect(() => externalTarget({ command: 'd', cwd: '/x', nodes })).toThrow(`--nodes: a cluster driver runs 2 to ${MAX_DRIVER_NODES} nodes, got ${nodes}`);
    }
  });
});
