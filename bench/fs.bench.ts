// npm run bench:fs — the powercut mount against a native directory on the same disk, in one run:
// sequential 128 KiB writes, 4 KiB writes, 140-byte appends with an fsync every 1024; then the
// cost of crash and reset, which the property suites pay hundreds of times.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon } from '../src/harness/daemon-process.js';

interface Workload {
  name: string;
  recordBytes: number;
  totalBytes: number;
  fsyncEvery: number; // records; 0 = one fsync at the end
}

const WORKLOADS: Workload[] = [
  { name: 'seq 128 KiB writes', recordBytes: 128 * 1024, totalBytes: 64 << 20, fsyncEvery: 0 },
  { name: 'seq 4 KiB writes', recordBytes: 4096, totalBytes: 16 << 20, fsyncEvery: 0 },
  { name: '140 B appends, fsync/1024', recordBytes: 140, totalBytes: 140 * 1024 * 40, fsyncEvery: 1024 },
];

// The workload runs in this process with sync calls: the daemon is another process, so that is safe.
function runWorkload(dir: string, w: Workload): { seconds: number; ops: number } {
  const path = join(dir, `bench-${w.recordBytes}`);
  const buf = Buffer.alloc(w.recordBytes, 0x61);
  const ops = Math.floor(w.totalBytes / w.recordBytes);
  const t0 = process.hrtime.bigint();
  const fd = openSync(path, 'a');
  for (let i = 1; i <= ops; i++) {
    writeSync(fd, buf);
    if (w.fsyncEvery > 0 && i % w.fsyncEvery === 0) fsyncSync(fd);
  }
  fsyncSync(fd);
  closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  rmSync(path);
  return { seconds, ops };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(10);

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'powercut-bench-'));
  const native = join(work, 'native');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(native);
  const d = await startDaemon({ mountpoint: join(work, 'mnt'), socketPath: join(work, 'ctl.sock') });
  try {
    console.log(`powercut fs benchmark (native dir: ${native})`);
    console.log(`${'workload'.padEnd(28)}${'native MB/s'.padStart(12)}${'mount MB/s'.padStart(12)}${'native op/s'.padStart(12)}${'mount op/s'.padStart(12)}${'ratio'.padStart(8)}`);
    for (const w of WORKLOADS) {
      const n = runWorkload(native, w);
      const m = runWorkload(d.mountpoint, w);
      await d.client.reset();
      const mb = (r: { seconds: number; ops: number }) => (r.ops * w.recordBytes) / r.seconds / 1e6;
      const opsPerS = (r: { seconds: number; ops: number }) => r.ops / r.seconds;
      console.log(`${w.name.padEnd(28)}${fmt(mb(n))}  ${fmt(mb(m))}  ${fmt(opsPerS(n), 0)}  ${fmt(opsPerS(m), 0)}  ${(mb(m) / mb(n)).toFixed(3).padStart(6)}`);
    }
    // Crash and reset latency, on a small tree like a queue directory after a few writes.
    const cycles = 30;
    const timings = { crash: [] as number[], reset: [] as number[] };
    for (let i = 0; i < cycles; i++) {
      const fd = openSync(join(d.mountpoint, 'page.1'), 'w');
      writeSync(fd, Buffer.alloc(64 * 1024, 1));
      fsyncSync(fd);
      closeSync(fd);
      let t = performance.now();
      await d.client.crash();
      timings.crash.push(performance.now() - t);
      t = performance.now();
      await d.client.reset();
      timings.reset.push(performance.now() - t);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`crash (unmount + model + remount): median ${median(timings.crash).toFixed(1)} ms, max ${Math.max(...timings.crash).toFixed(1)} ms over ${cycles}`);
    console.log(`reset (no remount):                median ${median(timings.reset).toFixed(1)} ms, max ${Math.max(...timings.reset).toFixed(1)} ms over ${cycles}`);
  } finally {
    await d.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`bench:fs: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
