// npm run bench:queue — Logstash's QueueBenchmark pushToPersistedQueue on a native directory:
// 140-byte events pushed one at a time, per design and checkpointWrites, beside a raw append+fsync
// baseline measured in the same run. Built for a noisy shared machine: every configuration (the
// baseline included) runs once per round, in an order that changes from round to round, and the
// table reports medians; ratios are medians of per-round ratios, so both sides of a ratio were
// measured seconds apart. Last line: one JSON object with every figure.
import { mkdtemp, open, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openQueue, type CheckpointDesign, type PageWriteDesign } from '../src/queue/index.js';

const EVENT_BYTES = 140;
const RAW_FSYNC_EVERY_EVENTS = 1024;
const WARMUP_EVENTS = 50_000;
// Calibrated run lengths stay within these bounds (a run shorter than ~1 s is at the mercy of a burst of
// load from other processes; sync designs and buffered ones differ tenfold in speed).
const MIN_RUN_EVENTS = 20_000;
const MAX_RUN_EVENTS = 2_000_000;
// The targets, printed beside the figures: checkpointWrites 1024 at >= 0.9 of unlimited for every
// design (Logstash measured 0.19), and the best design at >= 0.5 of the raw append baseline.
const TARGET_CKPT1024_OVER_UNLIMITED = 0.9;
const TARGET_BEST_OVER_RAW = 0.5;

const { values } = parseArgs({
  options: {
    'run-ms': { type: 'string', default: '1000' },
    events: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    'durable-events': { type: 'string', default: '1600' },
    'durable-rounds': { type: 'string', default: '3' },
    dir: { type: 'string', default: tmpdir() },
  },
});
function intOption(name: Exclude<keyof typeof values, 'dir'>, min: number): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) {
    console.error(`bench:queue: --${name} must be an integer >= ${min}, got ${values[name]}`);
    process.exit(2);
  }
  return n;
}
const runMs = intOption('run-ms', 10);
/** A fixed count for every configuration, or undefined: calibrated per design to last about runMs. */
const fixedEvents = values.events === undefined ? undefined : intOption('events', 16);
const rounds = intOption('rounds', 1);
const durableEvents = intOption('durable-events', 16);
const durableRounds = intOption('durable-rounds', 1);
const dirRoot = values.dir!;

interface Design {
  checkpointDesign: CheckpointDesign;
  pageWriteDesign: PageWriteDesign;
}
const designs: Design[] = [
  { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync' },
  { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered' },
  { checkpointDesign: 'append-log', pageWriteDesign: 'sync' },
  { checkpointDesign: 'append-log', pageWriteDesign: 'buffered' },
];
const designName = (d: Design) => `${d.checkpointDesign}/${d.pageWriteDesign}`;
const checkpointWritesValues = [1024, 50_000, 0]; // 0 = unlimited
const ckptKey = (cw: number) => (cw === 0 ? 'unlimited' : String(cw));
const event = Buffer.alloc(EVENT_BYTES, 0x78);

interface Figure {
  events: number;
  ms: number;
  opsPerMs: number;
  mbPerS: number;
}
const figure = (n: number, ms: number): Figure => ({
  events: n,
  ms: Math.round(ms),
  opsPerMs: Number((n / ms).toFixed(2)),
  mbPerS: Number(((n * EVENT_BYTES) / 1e6 / (ms / 1000)).toFixed(2)),
});
function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('invariant: median of no measurements');
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
/** The run whose time is the median (its ops/ms and MB/s belong together). */
const medianFigure = (figs: readonly Figure[]): Figure => figure(figs[0].events, median(figs.map((f) => f.ms)));
/** Rotates xs left by k: each round starts the interleaved order somewhere else. */
const rotate = <T>(xs: readonly T[], k: number): T[] => xs.map((_, i) => xs[(i + k) % xs.length]);

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(dirRoot, 'powercut-bench-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Same bytes, large sequential writes, an fsync every 1024 events: the best any queue could do here. */
async function raw(n: number): Promise<Figure> {
  return inTempDir(async (dir) => {
    const fh = await open(join(dir, 'raw'), 'w');
    try {
      const chunk = Buffer.alloc(EVENT_BYTES * RAW_FSYNC_EVERY_EVENTS, 0x78);
      const start = performance.now();
      let position = 0;
      for (let done = 0; done < n; done += RAW_FSYNC_EVERY_EVENTS) {
        const bytes = Math.min(RAW_FSYNC_EVERY_EVENTS, n - done) * EVENT_BYTES;
        await fh.write(chunk, 0, bytes, position);
        position += bytes;
        await fh.sync();
      }
      return figure(n, performance.now() - start);
    } finally {
      await fh.close();
    }
  });
}

/** Pushes one at a time; the clock includes close(), so buffered designs pay their final flush and fsync. */
async function push(design: Design, checkpointWrites: number, n: number): Promise<Figure> {
  return inTempDir(async (dir) => {
    const q = await openQueue(dir, { ...design, checkpointWrites });
    try {
      const start = performance.now();
      for (let i = 0; i < n; i++) await q.write(event);
      await q.close();
      return figure(n, performance.now() - start);
    } catch (err) {
      await q.close().catch(() => undefined);
      throw err;
    }
  });
}

/** checkpointWrites 1, every write waited durable; `writers` concurrent writers share fsyncs. */
async function durable(design: Design, writers: number): Promise<Figure> {
  return inTempDir(async (dir) => {
    const q = await openQueue(dir, { ...design, checkpointWrites: 1 });
    try {
      const perWriter = Math.floor(durableEvents / writers);
      const start = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let i = 0; i < perWriter; i++) await q.waitDurable(await q.write(event));
        }),
      );
      return figure(perWriter * writers, performance.now() - start);
    } finally {
      await q.close();
    }
  });
}

const benchStart = performance.now();
const fsInfo = await statfs(dirRoot);

// Warm-up (JIT, page cache and allocator settle), which also calibrates each run's event count: the
// same count for a design's three checkpointWrites values, so their ratio compares equal work.
const runEvents = (warm: Figure) => fixedEvents ?? Math.min(MAX_RUN_EVENTS, Math.max(MIN_RUN_EVENTS, Math.round(warm.opsPerMs * runMs)));
const eventsByDesign = new Map<string, number>();
for (const design of designs) eventsByDesign.set(designName(design), runEvents(await push(design, 1024, WARMUP_EVENTS)));
const rawEvents = runEvents(await raw(WARMUP_EVENTS));
console.log(
  `bench:queue — ${EVENT_BYTES}-byte events, ${rounds} rounds (interleaved, order changing each round; medians), in ${dirRoot} ` +
    `(fs type 0x${fsInfo.type.toString(16)}); events per run: raw ${rawEvents}, ` +
    designs.map((d) => `${designName(d)} ${eventsByDesign.get(designName(d))}`).join(', ') +
    (fixedEvents === undefined ? ` (calibrated to about ${runMs} ms a run)` : ''),
);

type Config = { kind: 'raw' } | { kind: 'push'; design: Design; checkpointWrites: number };
const configKey = (c: Config) => (c.kind === 'raw' ? 'raw' : `${designName(c.design)} ${ckptKey(c.checkpointWrites)}`);
/**
 * One round's order: the designs rotate, the baseline takes a different slot each round, and each
 * design's configurations run back to back with 1024 and unlimited adjacent, swapping places every
 * round, so a ratio compares runs seconds apart and a drift in machine load cancels out.
 */
function roundOrder(round: number): Config[] {
  const order: Config[] = [];
  const rawSlot = round % (designs.length + 1);
  rotate(designs, round % designs.length).forEach((design, i) => {
    if (i === rawSlot) order.push({ kind: 'raw' });
    const cws = round % 2 === 0 ? [1024, 0, 50_000] : [0, 1024, 50_000];
    for (const checkpointWrites of cws) order.push({ kind: 'push', design, checkpointWrites });
  });
  if (rawSlot === designs.length) order.push({ kind: 'raw' });
  return order;
}
/** Per round, per configuration: one figure. */
const perRound: Array<Map<string, Figure>> = [];
for (let round = 0; round < rounds; round++) {
  const got = new Map<string, Figure>();
  for (const c of roundOrder(round)) {
    got.set(
      configKey(c),
      c.kind === 'raw' ? await raw(rawEvents) : await push(c.design, c.checkpointWrites, eventsByDesign.get(designName(c.design))!),
    );
  }
  if (got.size !== 1 + designs.length * checkpointWritesValues.length) throw new Error(`invariant: round ${round + 1} measured ${got.size} configurations`);
  perRound.push(got);
  process.stderr.write(`round ${round + 1}/${rounds} done at ${((performance.now() - benchStart) / 1000).toFixed(0)} s\n`);
}
const figuresOf = (key: string) => perRound.map((r) => r.get(key)!);
const ratioOf = (a: string, b: string) => Number(median(perRound.map((r) => r.get(a)!.opsPerMs / r.get(b)!.opsPerMs)).toFixed(3));

const durableByDesign = new Map<string, { writers1: Figure[]; writers16: Figure[] }>();
for (let round = 0; round < durableRounds; round++) {
  for (const design of rotate(designs, round % designs.length)) {
    const slot = durableByDesign.get(designName(design)) ?? { writers1: [], writers16: [] };
    slot.writers1.push(await durable(design, 1));
    slot.writers16.push(await durable(design, 16));
    durableByDesign.set(designName(design), slot);
  }
}

const rawMedian = medianFigure(figuresOf('raw'));
const results = designs.map((design) => {
  const name = designName(design);
  const pushes = Object.fromEntries(checkpointWritesValues.map((cw) => [ckptKey(cw), medianFigure(figuresOf(`${name} ${ckptKey(cw)}`))]));
  const durableFigs = durableByDesign.get(name)!;
  return {
    design: name,
    pushes,
    ratioCkpt1024OverUnlimited: ratioOf(`${name} 1024`, `${name} unlimited`),
    ratioOverRaw: ratioOf(`${name} 1024`, 'raw'),
    /** Per-round 1024/unlimited ratios, to show the spread behind the median. */
    ratioCkpt1024OverUnlimitedRounds: perRound.map((r) => Number((r.get(`${name} 1024`)!.opsPerMs / r.get(`${name} unlimited`)!.opsPerMs).toFixed(3))),
    durableWrites: { writers1: medianFigure(durableFigs.writers1), writers16: medianFigure(durableFigs.writers16) },
  };
});

const pad = (s: string | number, n: number) => String(s).padStart(n);
const fixed = (x: number, digits: number) => x.toFixed(digits);
const rawOps = figuresOf('raw').map((f) => f.opsPerMs);
console.log('');
console.log(
  `${'raw append, fsync/1024'.padEnd(24)}${pad(fixed(rawMedian.opsPerMs, 2), 10)} ops/ms ${pad(fixed(rawMedian.mbPerS, 2), 8)} MB/s` +
    `   (rounds ${fixed(Math.min(...rawOps), 0)}..${fixed(Math.max(...rawOps), 0)} ops/ms)`,
);
console.log(
  `${'design (ops/ms)'.padEnd(24)}${pad('ckpt1024', 10)}${pad('ckpt50000', 11)}${pad('unlimited', 11)}${pad('1024/unl', 10)}${pad('1024/raw', 10)}` +
    `${pad('durable 1w / 16w', 20)}   1024/unl per round`,
);
for (const r of results) {
  const ops = (k: string) => pad(fixed(r.pushes[k].opsPerMs, 2), k === '1024' ? 10 : 11);
  console.log(
    `${r.design.padEnd(24)}${ops('1024')}${ops('50000')}${ops('unlimited')}${pad(fixed(r.ratioCkpt1024OverUnlimited, 3), 10)}` +
      `${pad(fixed(r.ratioOverRaw, 3), 10)}${pad(`${fixed(r.durableWrites.writers1.opsPerMs, 2)} / ${fixed(r.durableWrites.writers16.opsPerMs, 2)}`, 20)}` +
      `   ${r.ratioCkpt1024OverUnlimitedRounds.map((x) => fixed(x, 2)).join(' ')}`,
  );
}
const worstCkptRatio = Math.min(...results.map((r) => r.ratioCkpt1024OverUnlimited));
const bestOverRaw = Math.max(...results.map((r) => r.ratioOverRaw));
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
console.log(
  `targets: every design 1024/unl >= ${TARGET_CKPT1024_OVER_UNLIMITED}: worst ${fixed(worstCkptRatio, 3)} ${met(worstCkptRatio >= TARGET_CKPT1024_OVER_UNLIMITED)}; ` +
    `best design 1024/raw >= ${TARGET_BEST_OVER_RAW}: ${fixed(bestOverRaw, 3)} ${met(bestOverRaw >= TARGET_BEST_OVER_RAW)}; ` +
    `run took ${((performance.now() - benchStart) / 1000).toFixed(0)} s`,
);
console.log(
  JSON.stringify({
    eventBytes: EVENT_BYTES,
    runMs,
    fixedEvents: fixedEvents ?? null,
    rounds,
    durableEvents,
    durableRounds,
    raw: rawMedian,
    rawRoundsOpsPerMs: rawOps,
    designs: results,
  }),
);
