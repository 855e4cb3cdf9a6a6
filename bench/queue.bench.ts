// npm run bench:queue — Logstash's QueueBenchmark pushToPersistedQueue on a native directory:
// 140-byte events pushed one at a time, per design and checkpointWrites, beside a raw append+fsync
// baseline measured in the same run. Last line: one JSON object with every figure.
import { mkdtemp, open, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openQueue, type CheckpointDesign, type PageWriteDesign } from '../src/queue/index.js';

const EVENT_BYTES = 140;
const RAW_FSYNC_EVERY_EVENTS = 1024;

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    'durable-events': { type: 'string', default: '1600' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const events = Number(values.events);
const durableEvents = Number(values['durable-events']);
for (const [name, n] of [['--events', events], ['--durable-events', durableEvents]] as const) {
  if (!Number.isInteger(n) || n < 16) throw new Error(`bench:queue: ${name} must be an integer >= 16, got ${n}`);
}

const designs: Array<{ checkpointDesign: CheckpointDesign; pageWriteDesign: PageWriteDesign }> = [
  { checkpointDesign: 'atomic-file', pageWriteDesign: 'sync' },
  { checkpointDesign: 'atomic-file', pageWriteDesign: 'buffered' },
  { checkpointDesign: 'append-log', pageWriteDesign: 'sync' },
  { checkpointDesign: 'append-log', pageWriteDesign: 'buffered' },
];
const checkpointWritesValues = [1024, 50_000, 0]; // 0 = unlimited
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

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(values.dir, 'powercut-bench-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Same bytes, large sequential writes, an fsync every 1024 events: the best any queue could do here. */
async function raw(): Promise<Figure> {
  return inTempDir(async (dir) => {
    const fh = await open(join(dir, 'raw'), 'w');
    const chunk = Buffer.alloc(EVENT_BYTES * RAW_FSYNC_EVERY_EVENTS, 0x78);
    const start = performance.now();
    let position = 0;
    for (let done = 0; done < events; done += RAW_FSYNC_EVERY_EVENTS) {
      const n = Math.min(RAW_FSYNC_EVERY_EVENTS, events - done) * EVENT_BYTES;
      await fh.write(chunk, 0, n, position);
      position += n;
      await fh.sync();
    }
    const ms = performance.now() - start;
    await fh.close();
    return figure(events, ms);
  });
}

/** Pushes one at a time; the clock includes close(), so buffered designs pay their final flush. */
async function push(design: (typeof designs)[number], checkpointWrites: number): Promise<Figure> {
  return inTempDir(async (dir) => {
    const q = await openQueue(dir, { ...design, checkpointWrites });
    const start = performance.now();
    for (let i = 0; i < events; i++) await q.write(event);
    await q.close();
    return figure(events, performance.now() - start);
  });
}

/** checkpointWrites 1, every write waited durable; `writers` concurrent writers share fsyncs. */
async function durable(design: (typeof designs)[number], writers: number): Promise<Figure> {
  return inTempDir(async (dir) => {
    const q = await openQueue(dir, { ...design, checkpointWrites: 1 });
    const perWriter = Math.floor(durableEvents / writers);
    const start = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let i = 0; i < perWriter; i++) await q.waitDurable(await q.write(event));
      }),
    );
    const ms = performance.now() - start;
    await q.close();
    return figure(perWriter * writers, ms);
  });
}

const fsInfo = await statfs(values.dir);
console.log(`bench:queue — ${events} events of ${EVENT_BYTES} bytes per configuration, in ${values.dir} (fs type 0x${fsInfo.type.toString(16)})`);
const rawFigure = await raw();
const results = [];
for (const design of designs) {
  const name = `${design.checkpointDesign}/${design.pageWriteDesign}`;
  const byCkpt: Record<string, Figure> = {};
  for (const cw of checkpointWritesValues) byCkpt[cw === 0 ? 'unlimited' : String(cw)] = await push(design, cw);
  const durable1 = await durable(design, 1);
  const durable16 = await durable(design, 16);
  results.push({
    design: name,
    pushes: byCkpt,
    ratioCkpt1024OverUnlimited: Number((byCkpt['1024'].opsPerMs / byCkpt.unlimited.opsPerMs).toFixed(3)),
    ratioOverRaw: Number((byCkpt['1024'].opsPerMs / rawFigure.opsPerMs).toFixed(3)),
    durableWrites: { writers1: durable1, writers16: durable16 },
  });
}
const rawAfter = await raw(); // measured again: disk speed drifts; the table shows both

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log('');
console.log(`${'configuration'.padEnd(34)}${pad('ops/ms', 10)}${pad('MB/s', 10)}`);
console.log(`${'raw append, fsync/1024 (before)'.padEnd(34)}${pad(rawFigure.opsPerMs, 10)}${pad(rawFigure.mbPerS, 10)}`);
console.log(`${'raw append, fsync/1024 (after)'.padEnd(34)}${pad(rawAfter.opsPerMs, 10)}${pad(rawAfter.mbPerS, 10)}`);
for (const r of results) {
  for (const [cw, f] of Object.entries(r.pushes)) {
    console.log(`${`${r.design} ckptWrites=${cw}`.padEnd(34)}${pad(f.opsPerMs, 10)}${pad(f.mbPerS, 10)}`);
  }
}
console.log('');
console.log(`${'design'.padEnd(24)}${pad('1024/unlimited', 16)}${pad('1024/raw', 10)}${pad('durable 1w ops/ms', 19)}${pad('16w ops/ms', 12)}`);
for (const r of results) {
  console.log(
    `${r.design.padEnd(24)}${pad(r.ratioCkpt1024OverUnlimited, 16)}${pad(r.ratioOverRaw, 10)}${pad(r.durableWrites.writers1.opsPerMs, 19)}${pad(r.durableWrites.writers16.opsPerMs, 12)}`,
  );
}
console.log(JSON.stringify({ eventBytes: EVENT_BYTES, events, durableEvents, raw: rawFigure, rawAfter, designs: results }));
