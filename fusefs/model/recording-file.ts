// A recorded run as a file: every node's recorded calls with their write data, so the crash states
// of a run (a cluster's above all, whose nodes interleave anew on every run) can be listed, built
// and searched again later, exactly, without running the program. Gzipped JSON; write data as
// base64. Pure: bytes in, bytes out.
import { gunzipSync, gzipSync } from 'node:zlib';
import { RECORDED_METHODS, Recording, type RecordedCall, type RecordedMethod } from './recording.js';
import { SPECIAL_KINDS, type FsTree } from './nodes.js';

const FORMAT = 'powercut-recording';
const VERSION = 1;

/** A recorded run: each node's recording, and the last request of the run (its states end there). */
export interface RecordedRun {
  recordings: Recording[];
  lastOp: number;
}

/** An argument as stored: JSON has no bytes and no undefined (an optional argument left out). */
type StoredArg = string | number | { uid: number; gid: number } | { bytes: string } | { undefined: true };

function storeArg(a: unknown, where: string): StoredArg {
  if (a instanceof Uint8Array) return { bytes: Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64') };
  if (a === undefined) return { undefined: true };
  if (typeof a === 'string' || (typeof a === 'number' && Number.isFinite(a))) return a;
  if (isOwner(a)) return { uid: a.uid, gid: a.gid };
  throw new Error(`invariant: ${where} has an argument a recording file cannot hold: ${String(a)}`);
}

const isOwner = (a: unknown): a is { uid: number; gid: number } =>
  typeof a === 'object' && a !== null && Number.isInteger((a as { uid?: unknown }).uid) && Number.isInteger((a as { gid?: unknown }).gid);

/** The run as a file's bytes. */
export function encodeRecordedRun(run: RecordedRun): Buffer {
  const nodes = run.recordings.map((r, node) => {
    if (r.overflow) throw new Error(`invariant: node ${node}'s recording overflowed and holds no calls: ${r.overflow}`);
    return {
      owner: r.owner, startTime: r.startTime, maxBytes: r.maxBytes,
      ...(r.base ? { base: storeTree(r.base) } : {}),
      calls: r.calls.map((c) => ({ op: c.op, method: c.method, args: c.args.map((a, k) => storeArg(a, `node ${node}'s ${c.method} of request ${c.op} (argument ${k})`)), times: c.times })),
    };
  });
  return gzipSync(JSON.stringify({ format: FORMAT, version: VERSION, lastOp: run.lastOp, nodes }));
}

/** A recording file's bytes as the run they hold; an error naming `where` and the field when they are not one. */
export function decodeRecordedRun(bytes: Buffer, where: string): RecordedRun {
  const bad = (what: string): never => {
    throw new Error(`${where}: not a powercut recording: ${what}`);
  };
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(gunzipSync(bytes).toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    return bad(`it does not read as gzipped JSON (${(err as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || doc.format !== FORMAT) return bad(`its format is ${JSON.stringify(doc?.format)}, not "${FORMAT}"`);
  if (doc.version !== VERSION) return bad(`its version is ${JSON.stringify(doc.version)}; this powercut reads version ${VERSION}`);
  const lastOp = doc.lastOp;
  if (!Number.isInteger(lastOp) || (lastOp as number) < 0) return bad(`lastOp must be a request number >= 0, got ${JSON.stringify(lastOp)}`);
  if (!Array.isArray(doc.nodes) || doc.nodes.length === 0) return bad('nodes must be a non-empty list, one recording per node');
  const recordings = (doc.nodes as unknown[]).map((n, node) => {
    const at = `nodes[${node}]`;
    if (typeof n !== 'object' || n === null) return bad(`${at} must be an object`);
    const { owner, startTime, maxBytes, calls, base } = n as Record<string, unknown>;
    if (!isOwner(owner)) return bad(`${at}.owner must be {uid, gid}, got ${JSON.stringify(owner)}`);
    if (typeof startTime !== 'number' || !Number.isFinite(startTime)) return bad(`${at}.startTime must be a number, got ${JSON.stringify(startTime)}`);
    if (!Number.isInteger(maxBytes) || (maxBytes as number) < 1) return bad(`${at}.maxBytes must be an integer >= 1, got ${JSON.stringify(maxBytes)}`);
    if (!Array.isArray(calls)) return bad(`${at}.calls must be a list`);
    const r = new Recording({ uid: owner.uid, gid: owner.gid }, maxBytes as number, base === undefined ? undefined : readTree(base, `${at}.base`, bad));
    r.startTime = startTime;
    let lastCallOp = 0;
    for (const [k, c] of calls.entries()) r.add(readCall(c, `${at}.calls[${k}]`, lastOp as number, lastCallOp, bad, (op) => (lastCallOp = op)));
    if (r.overflow) return bad(`${at} holds more than its maxBytes (${maxBytes}): ${r.overflow}`);
    r.close();
    return r;
  });
  return { recordings, lastOp: lastOp as number };
}

function readCall(c: unknown, at: string, lastOp: number, previousOp: number, bad: (what: string) => never, seen: (op: number) => void): RecordedCall {
  if (typeof c !== 'object' || c === null) return bad(`${at} must be an object`);
  const { op, method, args, times } = c as Record<string, unknown>;
  if (!Number.isInteger(op) || (op as number) < 1 || (op as number) > lastOp) return bad(`${at}.op must be a request number in 1..${lastOp}, got ${JSON.stringify(op)}`);
  // A request's calls come in order: a replay up to request n applies a prefix of them.
  if ((op as number) < previousOp) return bad(`${at}.op is ${op}, before the previous call's ${previousOp}: calls must be in request order`);
  seen(op as number);
  if (!(RECORDED_METHODS as readonly unknown[]).includes(method)) return bad(`${at}.method must be one of ${RECORDED_METHODS.join(', ')}, got ${JSON.stringify(method)}`);
  if (!Array.isArray(args)) return bad(`${at}.args must be a list`);
  if (!Array.isArray(times) || !times.every((t) => typeof t === 'number' && Number.isFinite(t))) return bad(`${at}.times must be a list of numbers`);
  return { op: op as number, method: method as RecordedMethod, args: args.map((a, k) => readArg(a, `${at}.args[${k}]`, bad)), times: times as number[] };
}

/** A starting state as stored: the tree with each file's bytes as base64 and each directory's entries as an object. */
type StoredTree = { type: string; mode?: number; uid?: number; gid?: number; entries?: Record<string, StoredTree>; bytes?: string; target?: string; rdev?: number };

function storeTree(t: FsTree): StoredTree {
  const meta = { mode: t.mode, uid: t.uid, gid: t.gid };
  if (t.type === 'dir') return { type: 'dir', ...meta, entries: Object.fromEntries([...t.entries].map(([name, c]) => [name, storeTree(c)])) };
  if (t.type === 'file') return { type: 'file', ...meta, bytes: t.data.toString('base64') };
  if (t.type === 'symlink') return { type: 'symlink', ...meta, target: t.target };
  return { type: t.type, ...meta, rdev: t.rdev };
}

function readTree(s: unknown, at: string, bad: (what: string) => never): FsTree {
  if (typeof s !== 'object' || s === null) return bad(`${at} must be an object`);
  const { type, mode, uid, gid, entries, bytes, target, rdev } = s as StoredTree;
  for (const [k, v] of Object.entries({ mode, uid, gid })) if (v !== undefined && !Number.isInteger(v)) return bad(`${at}.${k} must be an integer, got ${JSON.stringify(v)}`);
  const meta = { ...(mode !== undefined ? { mode } : {}), ...(uid !== undefined ? { uid } : {}), ...(gid !== undefined ? { gid } : {}) };
  if (type === 'dir') {
    if (typeof entries !== 'object' || entries === null) return bad(`${at}.entries must be an object`);
    return { type: 'dir', ...meta, entries: new Map(Object.entries(entries).map(([name, c]) => [name, readTree(c, `${at}.entries[${JSON.stringify(name)}]`, bad)])) };
  }
  if (type === 'file') {
    if (typeof bytes !== 'string') return bad(`${at}.bytes must be base64`);
    return { type: 'file', ...meta, data: Buffer.from(bytes, 'base64') };
  }
  if (type === 'symlink') {
    if (typeof target !== 'string') return bad(`${at}.target must be a string`);
    return { type: 'symlink', ...meta, target };
  }
  if ((SPECIAL_KINDS as readonly unknown[]).includes(type) && Number.isInteger(rdev)) return { type: type as FsTree['type'] & (typeof SPECIAL_KINDS)[number], ...meta, rdev: rdev! };
  return bad(`${at}.type must be dir, file, symlink or ${SPECIAL_KINDS.join(', ')} (with rdev), got ${JSON.stringify(type)}`);
}

function readArg(a: unknown, at: string, bad: (what: string) => never): unknown {
  if (typeof a === 'string' || (typeof a === 'number' && Number.isFinite(a))) return a;
  if (typeof a === 'object' && a !== null) {
    if (typeof (a as { bytes?: unknown }).bytes === 'string') return new Uint8Array(Buffer.from((a as { bytes: string }).bytes, 'base64'));
    if ((a as { undefined?: unknown }).undefined === true) return undefined;
    if (isOwner(a)) return { uid: a.uid, gid: a.gid };
  }
  return bad(`${at} must be a string, a number, {uid, gid}, {bytes} or {undefined: true}, got ${JSON.stringify(a)?.slice(0, 100)}`);
}
