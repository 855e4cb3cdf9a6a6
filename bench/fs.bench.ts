// npm run bench:fs — the powercut mount against a native directory on the same disk, LazyFS (with
// --lazyfs) and the bare filesystem, all in one run: three workloads (128 KiB writes, 4 KiB writes,
// 140-byte appends with an fsync every 1024, each ending with an fsync), small-request rates (fstat,
// lookup of a missing name, 140-byte writes), `crash` and `reset`. Rounds are interleaved (every
// target once per round) and medians reported with min-max: the machine is shared, one number alone is noise.
//
// The BARE filesystem is powercut's own mount (same patched binding, options, request paths,
// unmount) over a filesystem that keeps nothing, every request through fuse-native's hop to the
// JavaScript thread: what any request but a write costs on the mount, and what every write cost
// before write-behind. As root the bench also runs a FUSE server in plain JS on /dev/fuse without
// that hop, to show what would lift the other requests (docs/fs.md, "Speed").
//
//   npm run bench:fs [-- --rounds N] [--baseline DIR ...] [--lazyfs PATH] [--throughput-only]
//   npm run bench:fs -- --profile      # V8 CPU profile of the powercut daemon per workload
// --baseline DIR adds a column for the powercut daemon of another built checkout (DIR/dist), e.g.
// the commit before a change: before and after in the same run. --lazyfs PATH adds LazyFS (the
// binary at PATH, built by the user: docs/fs.md) as a column and a section comparing powercut with
// it and with native. --throughput-only runs the three workloads alone (no ceilings, small requests or crash).
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { daemonEntry, startDaemon, type DaemonHandle } from '../src/harness/daemon-process.js';
import { pathToFileURL } from 'node:url';
import { ControlClient } from '../src/harness/control-client.js';
import { loadFuseNative } from '../fusefs/fuse-native-binding.js';
import { withTimeout } from '../fusefs/mount-generation.js';
import {
  BareFs, cleanupAll, median, num, perSyscall, rate, removeOnExit, runWorkload, SMALL_OPS, spread, startRawJs, track, untrack, WORKLOADS,
  type Target, type Workload,
} from './fs-bench-lib.js';
import { summarizeCpuProfile } from './cpu-profile.js';
import { startLazyFs } from './fs-lazyfs.js';

const CRASH_CYCLES = 30;
const NATIVE = 'native';
const POWERCUT = 'powercut';
const BARE = 'bare fuse-native';
const RAWJS = 'JS /dev/fuse';
const LAZYFS = 'LazyFS';

const line = (s = '') => console.log(s);
const pad = (s: string, w: number) => s.padStart(w);

interface Goal {
  what: string;
  /** The measured value, the target, the reference beside it (null: none measured), and how they print. */
  value: number;
  target: number;
  reference: number | null;
  higherIsBetter: boolean;
  unit: (x: number) => string;
  referenceName: string;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string' }, profile: { type: 'boolean' }, baseline: { type: 'string', multiple: true },
      lazyfs: { type: 'string' }, 'throughput-only': { type: 'boolean' },
    },
  });
  const rounds = Number(values.rounds ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const work = mkdtempSync(join(tmpdir(), 'powercut-bench-'));
  try {
    if (values.profile) await profile(work);
    else await bench(work, rounds, values.baseline ?? [], values.lazyfs ?? null, values['throughput-only'] ?? false);
  } finally {
    await cleanupAll();
    const left = readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.includes(work));
    if (left.length) line(`WARNING: mounts left: ${left.join('; ')}`);
  }
}

async function bench(work: string, rounds: number, baselines: string[], lazyfs: string | null, throughputOnly: boolean): Promise<void> {
  const root = process.geteuid?.() === 0;
  const { patched } = loadFuseNative();
  const native = join(work, 'native');
  mkdirSync(native);
  const targets: Target[] = [{ name: NATIVE, dir: native, stop: async () => {} }];
  let d: DaemonHandle | null = null;
  let bare: BareFs | null = null;
  try {
    d = await startDaemon({ mountpoint: join(work, 'mnt'), socketPath: join(work, 'ctl.sock') });
    removeOnExit(work); // after startDaemon: at exit its hook unmounts first
    const daemon = d;
    targets.push({ name: POWERCUT, dir: d.mountpoint, between: () => daemon.client.reset(), stop: () => daemon.stop() });
    for (const [i, dir] of baselines.entries()) {
      // Another checkout's daemon, started by that checkout's own harness.
      const other = (await import(pathToFileURL(join(dir, 'dist', 'src', 'harness', 'daemon-process.js')).href)) as { startDaemon: typeof startDaemon };
      const b = await other.startDaemon({ mountpoint: join(work, `base${i}`), socketPath: join(work, `base${i}.sock`) });
      targets.push({ name: `${POWERCUT} @${dir.split('/').filter(Boolean).pop()}`, dir: b.mountpoint, between: () => b.client.reset(), stop: () => b.stop() });
    }
    if (lazyfs) targets.push(await startLazyFs(lazyfs, work, LAZYFS));
    if (!throughputOnly) {
      bare = await BareFs.start(join(work, 'bare'));
      targets.push(bare.target(BARE));
      if (root) targets.push(await startRawJs(join(work, 'rawjs'), RAWJS));
    }

    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    line(`powercut fs benchmark — node ${process.version}, load ${load}, ${rounds} interleaved rounds: median (min-max)`);
    line(`  native: ${native}`);
    line(`  ${POWERCUT}: the daemon, ${patched ? 'patched' : 'STOCK'} fuse-native binding; ${root && patched ? 'crash: next mount made by mount(2) in libfuse, moved beneath the old one, old one detached by umount2 (no fork, no gap)' : 'unmount and mount through fusermount (fork)'}`);
    if (lazyfs) line(`  ${LAZYFS}: ${lazyfs}, its cache ${'2 GB'} without eviction (every write kept in memory, as powercut keeps it)`);
    if (!throughputOnly) {
      line(`  ${BARE}: the same mount (binding, options, request paths) over a filesystem that keeps nothing, every request through fuse-native's hop (no write-behind)`);
      if (root) line(`  ${RAWJS}: plain JS reading /dev/fuse on its main thread, no binding, no thread hop (a ceiling for a server on the event loop; not a design)`);
      else line(`  (${RAWJS} needs root: not run)`);
    }
    line();

    // ── throughput
    const res = new Map<string, { mbps: number[]; opsPerS: number[] }>();
    const reqLines = new Map<string, string>();
    for (let r = 0; r < rounds; r++) {
      for (const w of WORKLOADS) {
        for (const t of targets) {
          if (t.stats) await t.stats();
          const m = runWorkload(t.dir, w);
          if (t.stats) {
            const s = await t.stats();
            reqLines.set(w.name, `${perSyscall(s, m.ops)}; write sizes ${s.writeLens.map(([len, c]) => `${len}x${c}`).join(' ')}`);
          }
          if (t.between) await t.between();
          const k = `${w.name}|${t.name}`;
          const e = res.get(k) ?? { mbps: [], opsPerS: [] };
          e.mbps.push(m.mbps);
          e.opsPerS.push(m.opsPerS);
          res.set(k, e);
        }
      }
    }
    const names = targets.map((t) => t.name);
    const col = 24;
    const mb = (w: Workload, n: string) => median(res.get(`${w.name}|${n}`)!.mbps);
    const ops = (w: Workload, n: string) => median(res.get(`${w.name}|${n}`)!.opsPerS);
    line(`== Throughput, each workload ending with an fsync: MB/s; ratio = median / native median`);
    line(`${'workload'.padEnd(30)}${names.map((n) => pad(n, col)).join('')}`);
    for (const w of WORKLOADS) {
      line(`${`${w.name}, ${num((w.totalBytes / 1048576), 1)} MiB`.padEnd(30)}${names.map((n) => pad(spread(res.get(`${w.name}|${n}`)!.mbps), col)).join('')}`);
      line(`${'  ratio to native'.padEnd(30)}${names.map((n) => pad((mb(w, n) / mb(w, NATIVE)).toFixed(3), col)).join('')}`);
      line(`${'  writes/s'.padEnd(30)}${names.map((n) => pad(spread(res.get(`${w.name}|${n}`)!.opsPerS, 0), col)).join('')}`);
    }
    if (bare) {
      line(`FUSE requests per write() on the ${BARE} filesystem (last round):`);
      for (const w of WORKLOADS) line(`  ${w.name.padEnd(28)}${reqLines.get(w.name) ?? '-'}`);
    }
    line();
    if (lazyfs) peerSection(WORKLOADS.map((w) => ({ w, rounds: (n: string) => res.get(`${w.name}|${n}`)! })));
    if (throughputOnly || !bare) return;

    // ── small requests
    const small = new Map<string, number[]>();
    const smallReqs = new Map<string, string>();
    for (let r = 0; r < rounds; r++) {
      for (const o of SMALL_OPS) {
        for (const t of targets) {
          const { op, done } = o.setup(t.dir);
          if (t.stats) await t.stats();
          let count = 0;
          const rps = rate(() => { op(); count++; });
          if (t.stats) smallReqs.set(o.name, perSyscall(await t.stats(), count));
          done();
          if (t.between) await t.between();
          const k = `${o.name}|${t.name}`;
          small.set(k, [...(small.get(k) ?? []), rps]);
        }
      }
    }
    line(`== Small requests: syscalls per second`);
    line(`${'syscall'.padEnd(34)}${names.map((n) => pad(n, col)).join('')}`);
    for (const o of SMALL_OPS) line(`${o.name.padEnd(34)}${names.map((n) => pad(spread(small.get(`${o.name}|${n}`)!, 0), col)).join('')}`);
    line(`FUSE requests per syscall on the ${BARE} filesystem:`);
    for (const o of SMALL_OPS) line(`  ${o.name.padEnd(32)}${smallReqs.get(o.name) ?? '-'}`);
    line();

    // ── crash and reset
    const crash: number[] = [];
    const crashInDaemon: number[] = [];
    const reset: number[] = [];
    for (let i = 0; i < CRASH_CYCLES; i++) {
      // A small tree, like a queue directory after a few writes.
      const fd = openSync(join(d.mountpoint, 'page.1'), 'w');
      writeSync(fd, Buffer.alloc(64 * 1024, 1));
      fsyncSync(fd);
      closeSync(fd);
      let t = performance.now();
      const a = await d.client.crash();
      crash.push(performance.now() - t);
      crashInDaemon.push(a.remountMs ?? NaN);
      t = performance.now();
      await d.client.reset();
      reset.push(performance.now() - t);
    }
    // The same with 64 MiB fsynced in one file: a crash costs one pointer per 64 KiB chunk, not a copy.
    const big: number[] = [];
    const fd = openSync(join(d.mountpoint, 'big'), 'w');
    const mib = Buffer.alloc(1 << 20, 2);
    for (let i = 0; i < 64; i++) writeSync(fd, mib);
    fsyncSync(fd);
    closeSync(fd);
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      await d.client.crash();
      big.push(performance.now() - t);
    }
    await d.client.reset();
    const floor = ((await bare.request({ cmd: 'remount', cycles: CRASH_CYCLES })) as { ms: number[] }).ms;
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${d.pid}/status`, 'utf8'))?.[1];
    line(`== crash and reset (control round trip; the daemon's RSS now ${rss ? Math.round(Number(rss) / 1024) : '?'} MB)`);
    line(`crash (unmount + policy + mount), small tree:  median ${num(median(crash), 2)} ms, max ${num(Math.max(...crash), 2)} ms over ${CRASH_CYCLES} (inside the daemon: ${spread(crashInDaemon, 0)} ms)`);
    line(`crash with a 64 MiB file:                      median ${num(median(big), 2)} ms, max ${num(Math.max(...big), 2)} ms over ${big.length}`);
    line(`reset (not frozen: no remount):                median ${num(median(reset), 2)} ms, max ${num(Math.max(...reset), 2)} ms over ${CRASH_CYCLES}`);
    line(`floor: unmount + mount of the ${BARE} filesystem: median ${num(median(floor), 2)} ms, max ${num(Math.max(...floor), 2)} ms over ${CRASH_CYCLES}`);
    line();

    // ── targets
    const [w128, w4, w140] = WORKLOADS;
    const ratio = (w: Workload, n: string) => mb(w, n) / mb(w, NATIVE);
    const goals: Goal[] = [
      { what: '128 KiB writes, ratio to native', value: ratio(w128, POWERCUT), target: 0.5, reference: ratio(w128, BARE), higherIsBetter: true, unit: (x) => x.toFixed(2), referenceName: BARE },
      { what: '4 KiB writes, ratio to native', value: ratio(w4, POWERCUT), target: 0.15, reference: ratio(w4, BARE), higherIsBetter: true, unit: (x) => x.toFixed(2), referenceName: BARE },
      { what: '140 B appends, requests/s', value: ops(w140, POWERCUT), target: 40_000, reference: ops(w140, BARE), higherIsBetter: true, unit: (x) => `${num(x, 0)}/s`, referenceName: BARE },
      { what: 'crash, median', value: median(crash), target: 8, reference: median(floor), higherIsBetter: false, unit: (x) => `${num(x, 2)} ms`, referenceName: `floor, ${BARE} remount` },
    ];
    line('== Targets (with --lazyfs, the section above holds the ones against LazyFS)');
    for (const g of goals) {
      const met = g.higherIsBetter ? g.value >= g.target : g.value < g.target;
      const cmp = g.higherIsBetter ? '>=' : '<';
      line(`${g.what.padEnd(34)}${pad(g.unit(g.value), 10)}  target ${cmp} ${g.unit(g.target).padEnd(10)} ${met ? 'met    ' : 'NOT met'}  ${g.referenceName}: ${g.reference === null ? '-' : g.unit(g.reference)}`);
    }
    // The ratio to native moves with the page cache's speed and with how idle the machine is (waking
    // an idle CPU makes every FUSE round trip slower); powercut against the bare mount moves less.
    line(`powercut / ${BARE}: 128 KiB ${(mb(w128, POWERCUT) / mb(w128, BARE)).toFixed(2)}, 4 KiB ${(mb(w4, POWERCUT) / mb(w4, BARE)).toFixed(2)}, 140 B appends ${(ops(w140, POWERCUT) / ops(w140, BARE)).toFixed(2)}${root ? `; ${RAWJS} 140 B appends ${num(ops(w140, RAWJS), 0)}/s` : ''}`);
  } finally {
    for (const t of targets.slice(1).reverse()) {
      try {
        await t.stop();
      } catch (e) {
        line(`stopping ${t.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}

/**
 * The same-run comparison with LazyFS: per workload native, LazyFS and powercut (medians), and the
 * ratios the mount is held to: at least LazyFS's speed on every workload, and half of native's on 128 KiB writes.
 */
function peerSection(rows: { w: Workload; rounds: (target: string) => { mbps: number[]; opsPerS: number[] } }[]): void {
  const col = 18;
  line(`== Against ${LAZYFS}: medians of the rounds above (140 B appends in writes/s, the others in MB/s); ratios`);
  line(`   of the medians, and in brackets the median of each round's own ratio (the targets ran one after the other in it)`);
  line(`${'workload'.padEnd(30)}${[NATIVE, LAZYFS, POWERCUT, `${POWERCUT}/${LAZYFS}`, `${POWERCUT}/${NATIVE}`].map((n) => pad(n, col)).join('')}`);
  const verdicts: string[] = [];
  for (const { w, rounds } of rows) {
    const byOps = w.fsyncEvery > 0;
    const each = (n: string) => (byOps ? rounds(n).opsPerS : rounds(n).mbps);
    const v = (n: string) => median(each(n));
    const paired = (a: string, b: string) => median(each(a).map((x, r) => x / each(b)[r])).toFixed(2);
    const vsPeer = v(POWERCUT) / v(LAZYFS);
    const vsNative = v(POWERCUT) / v(NATIVE);
    const cells = [num(v(NATIVE), 1), num(v(LAZYFS), 1), num(v(POWERCUT), 1), `${vsPeer.toFixed(2)} (${paired(POWERCUT, LAZYFS)})`, `${vsNative.toFixed(2)} (${paired(POWERCUT, NATIVE)})`];
    line(`${w.name.padEnd(30)}${cells.map((x) => pad(x, col)).join('')}`);
    verdicts.push(`${w.name}: ${vsPeer >= 1 ? 'at or above' : 'BELOW'} ${LAZYFS}`);
    if (w.recordBytes === 128 * 1024) verdicts.push(`${w.name}: ${vsNative >= 0.5 ? 'at or above' : 'BELOW'} half of native`);
  }
  for (const v of verdicts) line(`  ${v}`);
  line();
}

/** One daemon per workload under --cpu-prof; self time per part of the daemon, in the workload windows only. */
async function profile(work: string): Promise<void> {
  removeOnExit(work);
  const cases: { w: Workload; repeat: number }[] = [
    { w: WORKLOADS[0], repeat: 2 },
    { w: WORKLOADS[1], repeat: 4 },
    { w: WORKLOADS[2], repeat: 2 },
  ];
  for (const c of cases) {
    const dir = join(work, `prof-${c.w.recordBytes}`);
    mkdirSync(dir, { recursive: true });
    const mnt = join(work, `prof-mnt-${c.w.recordBytes}`);
    const sock = join(work, `prof-${c.w.recordBytes}.sock`);
    // --cpu-prof is not allowed in NODE_OPTIONS: start the daemon entry point here, with the flag.
    const proc = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100', daemonEntry(), '--mountpoint', mnt, '--socket', sock], { stdio: ['ignore', 'pipe', 'inherit'] });
    track(proc, mnt);
    const exitedIn = (ms: number) => (proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve(true) : withTimeout('daemon exit', ms, new Promise<boolean>((res) => proc.once('exit', () => res(true)))).catch(() => false));
    let ops = 0;
    let seconds = 0;
    const windows: [number, number][] = [];
    try {
      const first = await withTimeout('daemon start', 15_000, new Promise<string>((res) => createInterface({ input: proc.stdout! }).once('line', res)));
      if ((JSON.parse(first) as { event?: string }).event !== 'mounted') throw new Error(`daemon: unexpected first line ${first}`);
      const client = await ControlClient.connect(sock);
      try {
        for (let i = 0; i < c.repeat; i++) {
          const t0 = Number(process.hrtime.bigint() / 1000n);
          const m = runWorkload(mnt, c.w);
          windows.push([t0, Number(process.hrtime.bigint() / 1000n)]);
          ops += m.ops;
          seconds += m.ops / m.opsPerS;
          await client.reset();
        }
        await client.shutdown();
      } finally {
        client.close();
      }
      if (!(await exitedIn(5_000))) throw new Error('daemon did not exit after shutdown');
    } finally {
      if (!(await exitedIn(10))) proc.kill('SIGKILL');
      await exitedIn(5_000);
      await untrack(proc, mnt);
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) {
      line(`${c.w.name}: the daemon wrote no profile`);
      continue;
    }
    const s = summarizeCpuProfile(join(dir, file), windows);
    const perOp = (ms: number) => ((ms * 1000) / ops).toFixed(2);
    line(`== powercut daemon profile, ${c.w.name}: ${ops} write() in ${seconds.toFixed(2)} s (${(ops / seconds).toFixed(0)}/s), main thread busy ${s.busyMs.toFixed(0)} of ${s.totalMs.toFixed(0)} ms sampled in the workload windows = ${perOp(s.busyMs)} us per write()`);
    line('  by part (self time, % of busy, us per write()):');
    for (const r of s.byCategory) line(`    ${r.name.padEnd(70)}${pad(r.pct.toFixed(1), 6)} %${pad(perOp(r.ms), 9)} us`);
    line('  top functions:');
    for (const r of s.byFunction) line(`    ${r.name.slice(0, 70).padEnd(72)}${pad(r.pct.toFixed(1), 6)} %${pad(perOp(r.ms), 9)} us`);
  }
}

main().catch((e: unknown) => {
  console.error(`bench:fs: ${e instanceof Error ? e.stack : String(e)}`);
  process.exitCode = 1;
});
