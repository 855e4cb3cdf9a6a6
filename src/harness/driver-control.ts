// The harness's control over a running driver (cluster/node-control.ts says what each action
// means): kill it all or some nodes, pause a node, wait for killed nodes to go, ask for a restart.
// One disk uses only killAll; the rest acts on the node groups the driver's node lines named.
import type { RestartCommand } from './driver-spec.js';
import { HarnessError } from './harness-error.js';
import { within, type LiveDriver } from './driver-live.js';
import { describeGroup, killGroup, nativeBacktrace, signalGroup } from './process-group.js';
import { MAX_PAUSE_MS, processState, signalGroupWith, STOP_SEEN_MS, stopPending, type ClusterControl } from './cluster/node-control.js';

/** `live`'s control; `killMs` bounds each kill, `restartMs` each restart. */
export function driverControl(live: LiveDriver, killMs: number, restartMs: number): ClusterControl {
  const { proc, groups } = live;
  /** Paused nodes: the group stopped and the timer that resumes it. */
  const paused = new Map<number, { pgid: number; timer: NodeJS.Timeout }>();
  const resume = (node: number) => {
    const p = paused.get(node);
    if (!p) return;
    paused.delete(node);
    clearTimeout(p.timer);
    signalGroupWith(p.pgid, 'SIGCONT');
  };
  return {
    groups,
    killAll: () => {
      live.killed ||= !live.exited;
      for (const k of [...paused.keys()]) resume(k);
      signalGroup(proc.pid);
      for (const g of groups.values()) signalGroup(g);
    },
    killNodes: (nodes) => {
      for (const k of nodes) {
        resume(k);
        signalGroup(groups.get(k));
      }
    },
    pause: async (node, durationMs) => {
      const pgid = groups.get(node);
      if (pgid === undefined) throw new HarnessError(`cannot pause node ${node}: the cluster driver printed no node line for it`);
      if (!(durationMs > 0 && durationMs <= MAX_PAUSE_MS)) throw new Error(`a pause lasts 1..${MAX_PAUSE_MS} ms, got ${durationMs}`);
      resume(node);
      signalGroupWith(pgid, 'SIGSTOP');
      paused.set(node, { pgid, timer: setTimeout(() => resume(node), durationMs) });
      await seenStopped(node, pgid);
    },
    reap: async (nodes) => {
      for (const k of nodes) {
        if (!(await killGroup(groups.get(k), killMs))) throw new HarnessError(`node ${k}'s processes (group ${groups.get(k)}) did not exit within ${killMs} ms of SIGKILL and the cut`);
      }
    },
    restart: (node) => restart(live, node, restartMs),
  };
}

/** The node's leader (its pgid) must be seen stopped: a pause that did not bite would pass unnoticed. */
async function seenStopped(node: number, pgid: number): Promise<void> {
  const deadline = Date.now() + STOP_SEEN_MS;
  for (let state = processState(pgid); state !== 'T' && state !== 't'; state = processState(pgid)) {
    if (state === null || state === 'Z') return; // it died meanwhile: nothing left to pause
    // In a request the daemon has not answered yet (state D): the stop is pending and bites when it returns.
    if (state === 'D' && stopPending(pgid)) return;
    if (Date.now() > deadline) throw new HarnessError(`node ${node}'s server (pid ${pgid}) was not stopped within ${STOP_SEEN_MS} ms of SIGSTOP (state ${state})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Asks the driver to restart `node` and waits (bounded) for its node line saying so, or for the run's end. */
async function restart(live: LiveDriver, node: number, restartMs: number): Promise<void> {
  const { proc } = live;
  let doneFirst = live.doneSeen;
  const restarted = new Promise<void>((resolve) => {
    live.whenLine((o) => (o.t === 'node' && o.node === node && o.restarted === true) || o.t === 'done' || o.t === 'error', () => resolve());
    live.whenLine((o) => o.t === 'done', () => (doneFirst = true));
    if (live.exited || live.ended) resolve();
  });
  const cmd: RestartCommand = { cmd: 'restart', node };
  proc.stdin.write(JSON.stringify(cmd) + '\n');
  const waited = await within(restarted, restartMs);
  // A run that ends (done) while one of its nodes is cut leaves that node down for good: a
  // cluster driver waits for the restart before its run ends (docs/driver-protocol.md, "Clusters").
  if (doneFirst) throw new HarnessError(`the cluster driver ended its run (its "done" line) while node ${node} was cut and not yet restarted: a cluster driver must wait (bounded) for the harness's {"cmd":"restart","node":${node}} before it ends a run in which a node's server was killed (docs/driver-protocol.md, "Clusters")`);
  if (waited === 'timeout') {
    const said = live.stdout.trim().split('\n').slice(-3).join('\n  ');
    const stderr = live.stderr;
    // Where the driver waits: a main thread blocked in the kernel or on a lock reads no stdin.
    // The driver's own native stacks too (NATS R3: its main thread waited on a futex, once in 5 to 25 runs under load).
    throw new HarnessError(`the cluster driver did not restart node ${node} (no {"t":"node","node":${node},...,"restarted":true} line) within ${restartMs} ms; its processes: ${describeGroup(proc.pid!)}; its last lines:\n  ${said}${stderr.trim() ? `\nits stderr:\n  ${stderr.trim().slice(-2000).split('\n').join('\n  ')}` : ''}\nthe driver's native stacks (gdb):\n  ${nativeBacktrace(proc.pid!).split('\n').join('\n  ')}`);
  }
}
