// Explores NATS JetStream R3 (three nats-server 2.9.10 on one cluster daemon) under cluster cuts,
// for docs/nats.md's cluster findings: node dist/bench/nats-cluster.js MODE [options]
//   case    --cut N [--kind write --path GLOB] [--nodes all|1|0,2] [--seed S]   one live case
//   states  [--max-per-kind K] [--first] [--slots K] [--rejudge]                        coordinated and mixed states of one recorded run
//   explore [--only coordinated|1|2|grid|lagging] [--step N] [--repeat R]    one kind of state, each printed as judged (with
//           the servers' election lines when it fails); grid: one node's cut every N requests; lagging: just before an
//           entry's last Raft append, the node that appended it second cut
// --workload small|long (default small); --settings JSON (default {"replicas":3}); every run's stderr is the servers' logs.
// Prints each verdict, its violations, and the seconds from the start to the first failure.
import { parseArgs } from 'node:util';
import { startTempDaemon } from '../src/harness/daemon-process.js';
import { runClusterCase, type NodesCut } from '../src/harness/cluster/cluster-run.js';
import { CLUSTER_STATE_SLOTS, ClusterStatePool, judgeSpreadStates, recordCluster } from '../src/harness/cluster/cluster-pool.js';
import { natsJetstream } from '../src/targets/nats-jetstream/index.js';
import type { Workload } from '../src/harness/workload.js';
import { nodeImageDir, type MutatingKind } from '../fusefs/protocol.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_STATE_CAPS } from '../fusefs/crash-states.js';
import { markDir } from '../src/harness/crash-run.js';
import { mergeTimeouts, runDriverProcess } from '../src/harness/driver-process.js';
import { truncateAtCut, type Recorded } from '../src/harness/exhaustive/judge-states.js';
import { scratchRoot } from '../src/harness/exhaustive/recovery-pool.js';
import { judge } from '../src/harness/oracle.js';
import { clusterSpec } from '../src/harness/cluster/cluster-run.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    cut: { type: 'string' },
    kind: { type: 'string' },
    path: { type: 'string' },
    nodes: { type: 'string', default: 'all' },
    seed: { type: 'string', default: '1' },
    repeat: { type: 'string', default: '1' },
    'max-per-kind': { type: 'string', default: '1000' },
    'max-states': { type: 'string', default: '1000' },
    first: { type: 'boolean', default: false },
    rejudge: { type: 'boolean', default: false },
    workload: { type: 'string', default: 'small' },
    only: { type: 'string' },
    step: { type: 'string', default: '0' },
    'resume-ms': { type: 'string', default: '15000' },
    slots: { type: 'string' },
    settings: { type: 'string', default: '{"replicas":3}' },
  },
});

const WORKLOADS: Record<string, Workload> = {
  small: {
    steps: [
      { op: 'write', sizesBytes: [100], waitDurable: true },
      { op: 'write', sizesBytes: [200], waitDurable: true },
      { op: 'read', maxEvents: 2 },
      { op: 'ack', count: 1, order: 'oldest' },
      { op: 'write', sizesBytes: [300], waitDurable: true },
    ],
  },
  xlong: {
    steps: Array.from({ length: 30 }, (_, i) => [
      { op: 'write' as const, sizesBytes: [100 + i], waitDurable: true },
      { op: 'read' as const, maxEvents: 1, waitMs: 300 },
      { op: 'ack' as const, count: 1, order: 'oldest' as const },
    ]).flat(),
  },
  long: {
    steps: Array.from({ length: 12 }, (_, i) => [
      { op: 'write' as const, sizesBytes: [100 + i], waitDurable: true },
      { op: 'read' as const, maxEvents: 1, waitMs: 300 },
      { op: 'ack' as const, count: 1, order: 'oldest' as const },
    ]).flat(),
  },
};

const settings = JSON.parse(values.settings!) as Record<string, unknown>;

/** This process's cluster servers by node: the nats-server children of its driver, each node told by the mount its store is open on. */
function serverPids(): Map<number, number> {
  const stat = (pid: string) => { try { return readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return ''; } };
  const ppid = (pid: string) => Number(stat(pid).slice(stat(pid).lastIndexOf(')') + 2).split(' ')[1]);
  const cmd = (pid: string) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return ''; } };
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const drivers = new Set(pids.filter((p) => ppid(p) === process.pid && cmd(p).includes('nats-jetstream/driver.js')));
  const out = new Map<number, number>();
  for (const p of pids.filter((q) => drivers.has(String(ppid(q))) && cmd(q).includes('nats-server'))) {
    let fds: string[] = [];
    try { fds = readdirSync(`/proc/${p}/fd`).map((fd) => { try { return readlinkSync(`/proc/${p}/fd/${fd}`); } catch { return ''; } }); } catch { /* gone */ }
    const node = fds.map((l) => /\/mnt(\d)\//.exec(l)?.[1]).find((n) => n !== undefined);
    if (node !== undefined) out.set(Number(node), Number(p));
  }
  return out;
}
const timeouts = { runMs: 120_000 };
const workload = WORKLOADS[values.workload!];
if (!workload) throw new Error(`--workload: one of ${Object.keys(WORKLOADS).join(', ')}`);

const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);
const cluster = await startTempDaemon('nats-r3-explore', 3);
// Stopped from outside: unmount before leaving.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void cluster.stop().finally(() => process.exit(130)));
try {
  if (positionals[0] === 'case') {
    const nodesCut: NodesCut = values.nodes === 'all' ? 'all' : values.nodes!.split(',').map(Number);
    for (let i = 0; i < Number(values.repeat); i++) {
      const seed = Number(values.seed) + i;
      const cut = values.cut ? { atOp: Number(values.cut) + i * Number(values.step), timing: 'before' as const, ...(values.kind ? { kind: values.kind as MutatingKind } : {}), ...(values.path ? { path: values.path } : {}) } : undefined;
      const r = await runClusterCase(cluster.daemon, natsJetstream, { workload, settings, nodesCut, cut, policy: 'lose-unsynced', seed }, timeouts);
      const restarted = r.runs[0].outcomes.filter((o) => o.t === 'node' && o.restarted).length;
      console.log(JSON.stringify({ at: secs(), seed, cut: cut?.atOp, nodes: values.nodes, verdict: r.verdict, frozenAt: r.frozenAt, restarted, violations: r.violations.map((v) => `${v.check}: ${v.message}`.slice(0, 400)) }));
      // A hang's stderr ends with what the harness saw of the driver (driver-process.ts): printed whole.
      if (r.verdict === 'fail') for (const e of r.stderr) if (e.includes('powercut harness:')) console.log(e.slice(e.indexOf('powercut harness:')));
      if (r.verdict === 'fail' && values.first) break;
    }
  } else if (positionals[0] === 'states') {
    // The gate's path: one recording, its states in the pool's parallel slots (CLUSTER_STATE_SLOTS at once).
    const pool = new ClusterStatePool(natsJetstream, 3, values.slots ? Number(values.slots) : natsJetstream.clusterStateSlots ?? CLUSTER_STATE_SLOTS, mergeTimeouts(timeouts));
    try {
      const rec = await recordCluster(cluster.daemon, natsJetstream, { workload, settings }, Number(values['max-states']), mergeTimeouts(timeouts));
      const judging = Date.now();
      const r = await judgeSpreadStates(cluster.daemon, pool, rec, Number(values['max-per-kind']), values.first);
      console.log(JSON.stringify({ at: secs(), slots: pool.size, judgingSeconds: (Date.now() - judging) / 1000, intervals: rec.intervals, states: rec.states.length, capped: rec.capped, judged: r.judged, shared: r.shared, failures: r.failures.length }));
      for (const f of r.failures) console.log(JSON.stringify({ state: f.state.id, violations: f.violations.map((v) => `${v.check}: ${v.message}`.slice(0, 300)) }));
      if (values.rejudge && r.failures.length > 0) {
        // Each failing state again, alone on one slot: a failure that passes alone came from the load of the slots.
        const alone = new ClusterStatePool(natsJetstream, 3, 1, mergeTimeouts(timeouts));
        try {
          const queue = r.failures.map((f) => f.state);
          await alone.judge(cluster.daemon, rec, () => queue.shift(), (v) => console.log(JSON.stringify({ alone: v.state.id, violations: v.violations.map((x) => `${x.check}: ${x.message}`.slice(0, 200)), ...(v.violations.length > 0 ? { driver: v.drainStderr.split('\n').filter((l) => l.includes('nats-jetstream driver')).slice(-12), lines: v.runs[1].outcomes.slice(-12) } : {}) })));
        } finally {
          await alone.stop();
        }
      }
    } finally {
      await pool.stop();
    }
  } else if (positionals[0] === 'explore') {
    // The states of one recorded run, one kind (--only coordinated|1|2: nodes cut), each judged and printed as it goes.
    const timeoutsAll = mergeTimeouts(timeouts);
    const client = cluster.daemon.client;
    const input = { workload, settings };
    await client.reset(true);
    const run = await runDriverProcess(cluster.daemon, natsJetstream.driver, { ...clusterSpec(cluster.daemon.mountpoints, input, 'workload', 0), mark: markDir(cluster.daemon) }, timeoutsAll);
    const { trace, marks } = await client.traceWithMarks();
    const recorded: Recorded = { run, trace, marks };
    const answer = await client.states(['lose-unsynced'], { ...DEFAULT_STATE_CAPS, maxStates: Number(values['max-states']) });
    const fsyncs = trace.filter((e) => e.kind === 'fsync' || e.kind === 'fsyncdir');
    console.log(JSON.stringify({ at: secs(), requests: trace.length, fsyncs: fsyncs.length, fsyncPaths: fsyncs.slice(0, 10).map((e) => `${e.node}:${e.path}`), intervals: answer.intervals, states: answer.states.length }));
    const only = values.only;
    let picked = answer.states.filter((st) => only === undefined || (only === 'coordinated' ? st.id.nodes === undefined : st.id.nodes?.length === Number(only)));
    if (only === 'grid') {
      // One node's power cut at every --step-th request (the others keep their live images): mixed states between persistence points.
      const step = Number(values.step) || 40;
      picked = [];
      for (let afterOp = step; afterOp < trace.length; afterOp += step) for (const k of [0, 1, 2]) picked.push({ id: { afterOp, policy: 'lose-unsynced', nodes: [k] } } as unknown as (typeof picked)[number]);
      console.log(JSON.stringify({ grid: picked.length }));
    }
    if (only === 'lagging') {
      // Raft appends of the stream's group (S-...): the same entry lands at the same offset on each node.
      // States just before the last node appends an entry, the power cut on the node that appended it second.
      const appends = new Map<string, typeof trace>();
      for (const e of trace) {
        const m = /\/_js_\/(S-[^/]+)\/msgs\/(\d+)\.blk$/.exec(e.path);
        if (e.kind !== 'write' || !m || e.node === undefined) continue;
        const key = `${m[1]}/${m[2]}@${e.offset}`;
        appends.set(key, [...(appends.get(key) ?? []), e]);
      }
      const which = values.nodes === 'all' ? 1 : Number(values.nodes);
      picked = [...appends.values()].filter((es) => es.length === 3).map((es) => ({ id: { afterOp: es[2].op - 1, policy: 'lose-unsynced' as const, nodes: [es[which].node!] } })) as unknown as typeof picked;
      console.log(JSON.stringify({ lagging: picked.length, orders: [...appends.values()].map((es) => es.map((e) => `${e.node}@${e.op}`).join(' ')).slice(0, 40) }));
    }
    const slot = await mkdtemp(path.join(scratchRoot(), 'powercut-nats-explore-'));
    try {
      for (let rep = 0; rep < Number(values.repeat); rep++) {
        for (const st of picked) {
          await client.stateImage(st.id, slot, true);
          const dirs = cluster.daemon.mountpoints.map((_, k) => path.join(slot, nodeImageDir(k)));
          const drain = await runDriverProcess(null, natsJetstream.driver, clusterSpec(dirs, input, 'drain', 1), timeoutsAll);
          const violations = judge({ target: natsJetstream.name, faultsInjected: false, runs: [truncateAtCut(recorded, st.id.afterOp), drain.record] });
          console.log(JSON.stringify({ at: secs(), rep, state: st.id, verdict: violations.length ? 'fail' : 'pass', violations: violations.map((v) => `${v.check}: ${v.message}`.slice(0, 300)) }));
          if (violations.length) console.log(drain.stderr.split("\n").filter((l) => /leader|Lost|Catchup|catchup|truncat|Resetting|mismatch|WARN|bootstrap|opened stream|not found|reset/i.test(l) && !/connect to route/.test(l)).slice(0, 80).join('\n'));
        }
      }
    } finally {
      await rm(slot, { recursive: true, force: true });
    }
  } else if (positionals[0] === 'pause') {
    // Jepsen's recipe for nats-server#7567 on three nodes: follower A paused while the leader L and
    // follower B commit; B's power cut at its --cut-th further append; L paused and A resumed while B
    // restarts on its empty disk; L resumed --resume-ms later. Then the drain, all three restarted.
    const timeoutsAll = mergeTimeouts(timeouts);
    const client = cluster.daemon.client;
    const input = { workload, settings };
    const seed = Number(values.seed);
    const resumeMs = Number(values['resume-ms']);
    await client.reset();
    const WAL = /\/_js_\/S-[^/]+\/msgs\/\d+\.blk$/;
    let plan: { L: number; A: number; B: number; pid: Map<number, number> } | null = null;
    const log = (o: object) => console.log(JSON.stringify({ at: secs(), ...o }));
    const work = runDriverProcess(cluster.daemon, natsJetstream.driver, clusterSpec(cluster.daemon.mountpoints, input, 'workload', 0), timeoutsAll, async (control) => {
      const p = plan!;
      control.killNodes([p.B]);
      await client.crash('lose-unsynced', seed, [p.B]);
      await control.reap([p.B]);
      process.kill(-p.pid.get(p.L)!, 'SIGSTOP');
      process.kill(-p.pid.get(p.A)!, 'SIGCONT');
      log({ step: `node ${p.B} cut and restarting; leader ${p.L} paused, ${p.A} resumed` });
      await control.restart(p.B);
      setTimeout(() => {
        try {
          process.kill(-p.pid.get(p.L)!, 'SIGCONT');
          log({ step: `leader ${p.L} resumed` });
        } catch {
          /* gone */
        }
      }, resumeMs).unref();
    });
    for (let tries = 0; plan === null && tries < 600; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      const t = await client.trace();
      const byEntry = new Map<string, number[]>();
      for (const e of t) if (e.kind === 'write' && WAL.test(e.path)) byEntry.set(`${e.path.replace(/^.*\/_js_\//, '')}@${e.offset}`, [...(byEntry.get(`${e.path.replace(/^.*\/_js_\//, '')}@${e.offset}`) ?? []), e.node!]);
      const complete = [...byEntry.values()].filter((ns) => ns.length === 3);
      if (complete.length < 2) continue;
      const L = complete.at(-1)![0];
      const [A, B] = [0, 1, 2].filter((k) => k !== L);
      const pid = serverPids();
      if (pid.size < 3) continue;
      // B's stores of committed messages: the cut comes once --cut more were committed by L and B alone (and PubAcked by L).
      const STORE = /\/streams\/POWERCUT\/msgs\/\d+\.blk$/;
      const bStores = t.filter((e) => e.node === B && e.kind === 'write' && STORE.test(e.path)).length;
      process.kill(-pid.get(A)!, 'SIGSTOP');
      const atOp = bStores + Number(values.cut ?? 3);
      await client.arm({ atOp, kind: 'write', path: '**/streams/POWERCUT/msgs/*.blk', node: B, timing: 'before' });
      plan = { L, A, B, pid };
      log({ step: `leader ${L}; follower ${A} paused; ${B} cut at its store ${atOp}`, pids: [...pid] });
    }
    const w = await work;
    if (plan) for (const pid of plan.pid.values()) try { process.kill(-pid, 'SIGCONT'); } catch { /* gone */ }
    log({ workload: w.record.outcomes.filter((o) => o.t === 'durable' || o.t === 'error').map((o) => JSON.stringify(o)).slice(-4), frozenAt: w.frozenAt });
    const drain = await runDriverProcess(cluster.daemon, natsJetstream.driver, clusterSpec(cluster.daemon.mountpoints, input, 'drain', 1), timeoutsAll);
    const violations = judge({ target: natsJetstream.name, faultsInjected: false, runs: [w.record, drain.record] });
    log({ verdict: violations.length ? 'fail' : 'pass', violations: violations.map((v) => `${v.check}: ${v.message}`.slice(0, 400)) });
    if (violations.length) console.log([w.stderr, drain.stderr].join('\n').split('\n').filter((l) => /leader|bootstrap|opened stream|Catchup|catchup|truncat|reset|WARN|mismatch/i.test(l) && !/connect to route/.test(l)).slice(0, 60).join('\n'));
  } else {
    throw new Error('mode: case, states, explore or pause');
  }
} catch (err) {
  // A daemon that died mid-run shows here as "control socket ... closed": say how it ended and what it printed.
  const death = await cluster.daemon.describeDeath(2_000);
  if (death) console.error(`bench: ${death}`);
  throw err;
} finally {
  await cluster.stop();
}
console.log(`done in ${secs()} s`);
