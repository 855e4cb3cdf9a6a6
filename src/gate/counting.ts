// Counts power cuts as they happen, for the live progress line: the property suites report their
// numbers only at the end of a round, so the gate watches the daemon's `crash` requests instead.
import type { DaemonHandle } from '../harness/daemon-process.js';

export interface CountingDaemon {
  daemon: DaemonHandle;
  cuts(): number;
}

export function countingDaemon(daemon: DaemonHandle): CountingDaemon {
  let cuts = 0;
  const client = new Proxy(daemon.client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'crash') return value.bind(target);
      return async (...args: unknown[]) => {
        const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        cuts++;
        return answer;
      };
    },
  });
  return { daemon: { ...daemon, client, stop: () => daemon.stop(), kill: () => daemon.kill() }, cuts: () => cuts };
}
