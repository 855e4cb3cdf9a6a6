// A queue in any language: a target made from a driver command (docs/driver-protocol.md). The
// command is run by /bin/sh with `exec`, so shell quoting works and the driver itself is the
// process the harness kills at a power cut. Its settings are fixed (--settings JSON): the tool
// knows nothing of its files, so crash points aim at requests by kind only. With `nodes` (2 or
// more) it is a cluster driver (docs/driver-protocol.md, "Clusters"): one mount per node.
import fc from 'fast-check';
import path from 'node:path';
import type { ExternalDriver, Target, TargetSettings } from '../harness/target.js';

export const EXTERNAL_TARGET = 'external';
/** The most nodes an external cluster driver runs (one mount each, on one daemon). */
export const MAX_DRIVER_NODES = 9;

export function externalTarget(driver: ExternalDriver, settings: TargetSettings = {}): Target {
  if (driver.command.trim() === '') throw new Error('--driver: the command is empty');
  const nodes = driver.nodes;
  if (nodes !== undefined && !(Number.isInteger(nodes) && nodes >= 2 && nodes <= MAX_DRIVER_NODES)) throw new Error(`--nodes: a cluster driver runs 2 to ${MAX_DRIVER_NODES} nodes, got ${nodes}`);
  return {
    name: EXTERNAL_TARGET,
    summary: `the driver '${driver.command}' (in ${driver.cwd})${nodes !== undefined ? `, a cluster of ${nodes} nodes` : ''}`,
    ...(nodes !== undefined ? { nodeCount: () => nodes } : {}),
    driver: { file: '/bin/sh', args: ['-c', `exec ${driver.command}`], cwd: path.resolve(driver.cwd), ...(driver.network ? { network: driver.network } : {}) },
    // Only the driver knows whether its engine needs a prepared directory: it is asked (a setup spec).
    asksSetup: true,
    // Only the driver knows its settings: it rejects bad ones with exit 2 (docs/driver-protocol.md).
    checkSettings: () => undefined,
    settingsArb: fc.constant(settings),
    suites: [{ name: 'driver', settings }],
    fitWorkload: (w) => w,
    cutTargets: [{ kind: 'write' }, { kind: 'fsync' }, { kind: 'fsyncdir' }, { kind: 'rename' }],
    faultPaths: ['/**'],
    knownBad: {},
    workloadEvents: (trace) => ({
      'files created': trace.filter((e) => e.kind === 'create' && e.result === 0).length,
      'files removed': trace.filter((e) => e.kind === 'unlink' && e.result === 0).length,
    }),
  };
}
