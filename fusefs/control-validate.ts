// Validates one control request line into a typed ControlRequest; every problem is an Error naming
// the field, which the server turns into {"ok":false,"error":...}.
import { MUTATING_KINDS, POLICIES, type ControlRequest, type CrashPoint, type Fault } from './protocol.js';
import { STATE_POLICIES, type CrashStateId, type DataOutcome, type Hypothesis, type ProbeUnit } from './crash-states.js';
import { MAX_FSYNC_HOLD_MS } from './fsync-holds.js';
import { keepsNoUnsynced } from './model/policies/index.js';

const CMDS = ['status', 'arm', 'disarm', 'release', 'wait-frozen', 'crash', 'trace', 'image', 'fault', 'clear-faults', 'reset', 'starting-state', 'states', 'load-state', 'state-image', 'units', 'save-recording', 'load-recording', 'shutdown'] as const;
const DATA_KINDS = ['all', 'none', 'only', 'except', 'sectors'] as const;
const FAULT_TYPES = ['fsync-eio', 'enospc', 'read-eio', 'bitflip'] as const;
const MAX_WAIT_MS = 10 * 60_000;

type Obj = Record<string, unknown>;

function fail(msg: string): never {
  throw new Error(msg);
}

function allowOnly(o: Obj, cmd: string, keys: string[]): void {
  for (const k of Object.keys(o)) if (k !== 'cmd' && !keys.includes(k)) fail(`${cmd}: unknown field '${k}'`);
}

function int(o: Obj, cmd: string, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    fail(`${cmd}: '${key}' must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

function optInt(o: Obj, cmd: string, key: string, min: number, max?: number): number | undefined {
  return o[key] === undefined ? undefined : int(o, cmd, key, min, max);
}

function str(o: Obj, cmd: string, key: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0) fail(`${cmd}: '${key}' must be a non-empty string, got ${JSON.stringify(v)}`);
  return v;
}

function oneOf<T extends string>(o: Obj, cmd: string, key: string, allowed: readonly T[]): T {
  const v = o[key];
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    fail(`${cmd}: '${key}' must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

/** The highest node index a request may name (the daemon checks it against the nodes it serves). */
const MAX_NODE = 63;

export function parseCrashPoint(o: Obj, cmd = 'arm'): CrashPoint {
  allowOnly(o, cmd, ['atOp', 'kind', 'path', 'node', 'timing']);
  const point: CrashPoint = { atOp: int(o, cmd, 'atOp', 1), timing: oneOf(o, cmd, 'timing', ['before', 'after'] as const) };
  if (o.kind !== undefined) point.kind = oneOf(o, cmd, 'kind', MUTATING_KINDS);
  if (o.path !== undefined) point.path = str(o, cmd, 'path');
  if (o.node !== undefined) point.node = int(o, cmd, 'node', 0, MAX_NODE);
  return point;
}

/** A nonempty list of distinct node indexes, sorted. */
function nodeList(o: Obj, cmd: string, key: string): number[] {
  const v = o[key];
  if (!Array.isArray(v) || v.length === 0 || !v.every((k) => Number.isInteger(k) && k >= 0 && k <= MAX_NODE) || new Set(v).size !== v.length) {
    fail(`${cmd}: '${key}' must be a nonempty array of distinct node indexes (0..${MAX_NODE}), got ${JSON.stringify(v)}`);
  }
  return [...(v as number[])].sort((a, b) => a - b);
}

/** States of some persistence intervals only: a list of distinct interval indexes. */
function intervalList(v: unknown): number[] {
  if (!Array.isArray(v) || !v.every((k) => Number.isInteger(k) && k >= 0) || new Set(v).size !== v.length) {
    fail(`states: 'onlyIntervals' must be an array of distinct interval indexes (integers from 0), got ${JSON.stringify(v)}`);
  }
  return [...(v as number[])].sort((a, b) => a - b);
}

/** A fault, and the cluster node it targets if named. */
export function parseFault(raw: Obj): Fault & { node?: number } {
  const { node, ...o } = raw;
  const fault = parseFaultOnly(o);
  return node === undefined ? fault : { ...fault, node: int({ node }, 'fault', 'node', 0, MAX_NODE) };
}

function parseFaultOnly(o: Obj): Fault {
  const type = oneOf(o, 'fault', 'type', FAULT_TYPES);
  switch (type) {
    case 'fsync-eio': {
      allowOnly(o, 'fault', ['type', 'path', 'count']);
      const f: Fault = { type, path: str(o, 'fault', 'path') };
      const count = optInt(o, 'fault', 'count', 1);
      if (count !== undefined) f.count = count;
      return f;
    }
    case 'enospc':
      allowOnly(o, 'fault', ['type', 'afterBytes']);
      return { type, afterBytes: int(o, 'fault', 'afterBytes', 0) };
    case 'read-eio':
      allowOnly(o, 'fault', ['type', 'path', 'offset', 'length']);
      return { type, path: str(o, 'fault', 'path'), offset: int(o, 'fault', 'offset', 0), length: int(o, 'fault', 'length', 1) };
    case 'bitflip': {
      allowOnly(o, 'fault', ['type', 'path', 'offset', 'bit']);
      const f: Fault = { type, path: str(o, 'fault', 'path'), offset: int(o, 'fault', 'offset', 0) };
      const bit = optInt(o, 'fault', 'bit', 0, 7);
      if (bit !== undefined) f.bit = bit;
      return f;
    }
  }
}

function parseStateId(v: unknown): CrashStateId {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`load-state: 'state' must be an object {afterOp, policy, dirPrefix?, data?}, got ${JSON.stringify(v)}`);
  const o = v as Obj;
  const cmd = 'load-state: state';
  allowOnly(o, cmd, ['afterOp', 'policy', 'dirPrefix', 'data', 'nodes', 'outcomes']);
  const id: CrashStateId = { afterOp: int(o, cmd, 'afterOp', 0), policy: oneOf(o, cmd, 'policy', STATE_POLICIES) };
  if (o.nodes !== undefined) id.nodes = nodeList(o, cmd, 'nodes');
  if (keepsNoUnsynced(id.policy)) {
    if (o.dirPrefix !== undefined || o.data !== undefined || o.outcomes !== undefined) fail(`${cmd}: dirPrefix, data and outcomes belong to torn and journaled states only`);
    return id;
  }
  // A cluster's torn or journaled state: each cut node's own outcome.
  if (o.outcomes !== undefined) {
    if (o.dirPrefix !== undefined || o.data !== undefined) fail(`${cmd}: a cluster's state gives dirPrefix and data per node in 'outcomes', not at its top`);
    if (!Array.isArray(o.outcomes) || o.outcomes.length === 0) fail(`${cmd}: 'outcomes' must be a nonempty array of {node, dirPrefix, data}, got ${JSON.stringify(o.outcomes)}`);
    id.outcomes = o.outcomes.map((x: unknown, i: number) => {
      const at = `${cmd}.outcomes[${i}]`;
      if (typeof x !== 'object' || x === null || Array.isArray(x)) fail(`${at} must be an object {node, dirPrefix, data}, got ${JSON.stringify(x)}`);
      const e = x as Obj;
      allowOnly(e, at, ['node', 'dirPrefix', 'data']);
      return { node: int(e, at, 'node', 0, MAX_NODE), ...parseOutcome(e, at, id.policy) };
    });
    return id;
  }
  return { ...id, ...parseOutcome(o, cmd, id.policy) };
}

/** A torn or journaled state's dirPrefix and data (of one disk, or of one cut node). */
function parseOutcome(o: Obj, cmd: string, policy: string): { dirPrefix: number; data: DataOutcome } {
  const dirPrefix = int(o, cmd, 'dirPrefix', 0);
  const d = o.data as Obj;
  if (typeof d !== 'object' || d === null) fail(`${cmd}: a ${policy} state needs 'data' {kind: ${DATA_KINDS.join('|')}}, got ${JSON.stringify(o.data)}`);
  const kind = oneOf(d, `${cmd}.data`, 'kind', DATA_KINDS);
  if (kind === 'only' || kind === 'except') {
    allowOnly(d, `${cmd}.data`, ['kind', 'write']);
    return { dirPrefix, data: { kind, write: int(d, `${cmd}.data`, 'write', 1) } };
  }
  if (kind === 'sectors') {
    allowOnly(d, `${cmd}.data`, ['kind', 'seed']);
    return { dirPrefix, data: { kind, seed: int(d, `${cmd}.data`, 'seed', Number.MIN_SAFE_INTEGER) } };
  }
  allowOnly(d, `${cmd}.data`, ['kind']);
  return { dirPrefix, data: { kind } };
}

function parseHypothesis(v: unknown, cmd: string): Hypothesis {
  const o = v as Obj;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) fail(`${cmd}: 'hypothesis' must be an object {fsyncAfter: [{afterOp, ino|path, node?}, ...]}, got ${JSON.stringify(v)}`);
  allowOnly(o, `${cmd}: hypothesis`, ['fsyncAfter', 'fsyncSkip']);
  if (!Array.isArray(o.fsyncAfter)) fail(`${cmd}: hypothesis.fsyncAfter must be an array of {afterOp, ino}, got ${JSON.stringify(o.fsyncAfter)}`);
  if (o.fsyncSkip !== undefined && (!Array.isArray(o.fsyncSkip) || !o.fsyncSkip.every((x) => Number.isInteger(x) && (x as number) >= 1))) fail(`${cmd}: hypothesis.fsyncSkip must be an array of request numbers, got ${JSON.stringify(o.fsyncSkip)}`);
  return {
    ...(o.fsyncSkip !== undefined ? { fsyncSkip: o.fsyncSkip as number[] } : {}),
    fsyncAfter: o.fsyncAfter.map((x: unknown) => {
      const e = x as Obj;
      if (typeof e !== 'object' || e === null) fail(`${cmd}: hypothesis.fsyncAfter entries must be {afterOp, ino}, got ${JSON.stringify(x)}`);
      allowOnly(e, `${cmd}: hypothesis.fsyncAfter`, ['afterOp', 'ino', 'path', 'node']);
      const afterOp = int(e, `${cmd}: hypothesis.fsyncAfter`, 'afterOp', 0);
      // Whether the node exists (and is needed) only the daemon knows: it checks the range.
      const nodeOf = optInt(e, `${cmd}: hypothesis.fsyncAfter`, 'node', 0);
      const node = nodeOf !== undefined ? { node: nodeOf } : {};
      return e.path !== undefined ? { afterOp, path: str(e, `${cmd}: hypothesis.fsyncAfter`, 'path'), ...node } : { afterOp, ino: int(e, `${cmd}: hypothesis.fsyncAfter`, 'ino', 1), ...node };
    }),
  };
}

function parseProbe(v: unknown, request: string): ProbeUnit[] {
  if (!Array.isArray(v)) fail(`${request}: 'probe' must be an array of units {kind: file|dir|meta, ino, node?, ...}, got ${JSON.stringify(v)}`);
  return v.map((x: unknown): ProbeUnit => {
    const u = x as Obj;
    const cmd = `${request}: probe`;
    if (typeof u !== 'object' || u === null) fail(`${cmd}: a unit must be an object, got ${JSON.stringify(x)}`);
    const kind = oneOf(u, cmd, 'kind', ['file', 'dir', 'meta'] as const);
    const ino = int(u, cmd, 'ino', 1);
    const nodeOf = optInt(u, cmd, 'node', 0);
    const node = nodeOf !== undefined ? { node: nodeOf } : {};
    if (kind === 'file') {
      allowOnly(u, cmd, ['kind', 'ino', 'upTo', 'node']);
      const upTo = optInt(u, cmd, 'upTo', 0);
      return { kind, ino, ...(upTo !== undefined ? { upTo } : {}), ...node };
    }
    if (kind === 'dir') {
      allowOnly(u, cmd, ['kind', 'ino', 'seqs', 'node']);
      if (u.seqs !== undefined && (!Array.isArray(u.seqs) || !u.seqs.every((s) => Number.isInteger(s)))) fail(`${cmd}: 'seqs' must be an array of change seqs, got ${JSON.stringify(u.seqs)}`);
      return { kind, ino, ...(u.seqs !== undefined ? { seqs: u.seqs as number[] } : {}), ...node };
    }
    allowOnly(u, cmd, ['kind', 'ino', 'node']);
    return { kind, ino, ...node };
  });
}

const withHypothesis = (o: Obj, cmd: string): { hypothesis?: Hypothesis } => (o.hypothesis !== undefined ? { hypothesis: parseHypothesis(o.hypothesis, cmd) } : {});

/** Parses one JSON line; throws an Error naming what is wrong. */
export function parseRequest(line: string): ControlRequest {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    fail(`request is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('request must be a JSON object with a "cmd" field');
  const o = v as Obj;
  const cmd = oneOf(o, 'request', 'cmd', CMDS);
  switch (cmd) {
    case 'status': case 'disarm': case 'trace': case 'clear-faults': case 'shutdown':
      allowOnly(o, cmd, []);
      return { cmd };
    case 'reset': {
      allowOnly(o, cmd, ['record', 'fsyncHolds']);
      if (o.record !== undefined && typeof o.record !== 'boolean') fail(`reset: 'record' must be true or false, got ${JSON.stringify(o.record)}`);
      const r: ControlRequest = { cmd, ...(o.record !== undefined ? { record: o.record as boolean } : {}) };
      if (o.fsyncHolds !== undefined) {
        const h = o.fsyncHolds as Obj;
        if (typeof h !== 'object' || h === null || Array.isArray(h)) fail(`reset: 'fsyncHolds' must be an object {seed, maxHoldMs}, got ${JSON.stringify(o.fsyncHolds)}`);
        allowOnly(h, 'reset: fsyncHolds', ['seed', 'maxHoldMs']);
        r.fsyncHolds = { seed: int(h, 'reset: fsyncHolds', 'seed', Number.MIN_SAFE_INTEGER), maxHoldMs: int(h, 'reset: fsyncHolds', 'maxHoldMs', 0, MAX_FSYNC_HOLD_MS) };
      }
      return r;
    }
    case 'starting-state': {
      allowOnly(o, cmd, ['from', 'clear']);
      if (o.clear !== undefined && typeof o.clear !== 'boolean') fail(`starting-state: 'clear' must be true or false, got ${JSON.stringify(o.clear)}`);
      if (o.clear === true && o.from !== undefined) fail("starting-state: give 'from' (an image folder) or 'clear', not both");
      return { cmd, ...(o.from !== undefined ? { from: str(o, cmd, 'from') } : {}), ...(o.clear === true ? { clear: true } : {}) };
    }
    case 'states': {
      allowOnly(o, cmd, ['policies', 'maxStates', 'maxStatesPerInterval', 'sectorPatterns', 'hypothesis', 'onlyIntervals']);
      if (!Array.isArray(o.policies) || o.policies.length === 0 || !o.policies.every((p) => (STATE_POLICIES as readonly unknown[]).includes(p))) {
        fail(`states: 'policies' must be a non-empty array of ${STATE_POLICIES.join(', ')}, got ${JSON.stringify(o.policies)}`);
      }
      return {
        cmd, policies: o.policies as (typeof STATE_POLICIES)[number][],
        maxStates: int(o, cmd, 'maxStates', 1, 1_000_000), maxStatesPerInterval: int(o, cmd, 'maxStatesPerInterval', 1, 100_000), sectorPatterns: int(o, cmd, 'sectorPatterns', 0, 1_000),
        ...withHypothesis(o, cmd),
        ...(o.onlyIntervals !== undefined ? { onlyIntervals: intervalList(o.onlyIntervals) } : {}),
      };
    }
    case 'load-state': {
      allowOnly(o, cmd, ['state', 'probe', 'hypothesis']);
      return { cmd, state: parseStateId(o.state), ...(o.probe !== undefined ? { probe: parseProbe(o.probe, cmd) } : {}), ...withHypothesis(o, cmd) };
    }
    case 'units': {
      allowOnly(o, cmd, ['state', 'hypothesis']);
      return { cmd, state: parseStateId(o.state), ...withHypothesis(o, cmd) };
    }
    case 'state-image': {
      allowOnly(o, cmd, ['state', 'out', 'replace', 'probe', 'hypothesis']);
      if (o.replace !== undefined && typeof o.replace !== 'boolean') fail(`state-image: 'replace' must be true or false, got ${JSON.stringify(o.replace)}`);
      return {
        cmd, state: parseStateId(o.state), out: str(o, cmd, 'out'), ...(o.replace ? { replace: true } : {}),
        ...(o.probe !== undefined ? { probe: parseProbe(o.probe, cmd) } : {}), ...withHypothesis(o, cmd),
      };
    }
    case 'save-recording':
      allowOnly(o, cmd, ['out']);
      return { cmd, out: str(o, cmd, 'out') };
    case 'load-recording':
      allowOnly(o, cmd, ['from']);
      return { cmd, from: str(o, cmd, 'from') };
    case 'arm':
      return { cmd, ...parseCrashPoint(o) };
    case 'release': {
      allowOnly(o, cmd, ['arm']);
      if (o.arm === undefined) return { cmd };
      if (typeof o.arm !== 'object' || o.arm === null || Array.isArray(o.arm)) fail(`release: 'arm' must be a crash point object, got ${JSON.stringify(o.arm)}`);
      return { cmd, arm: parseCrashPoint(o.arm as Obj, 'release.arm') };
    }
    case 'wait-frozen':
      allowOnly(o, cmd, ['timeoutMs']);
      return { cmd, timeoutMs: int(o, cmd, 'timeoutMs', 0, MAX_WAIT_MS) };
    case 'crash': {
      allowOnly(o, cmd, ['policy', 'seed', 'nodes']);
      const r: ControlRequest = { cmd };
      if (o.policy !== undefined) r.policy = oneOf(o, cmd, 'policy', POLICIES);
      if (o.seed !== undefined) r.seed = int(o, cmd, 'seed', Number.MIN_SAFE_INTEGER);
      if (o.nodes !== undefined) r.nodes = nodeList(o, cmd, 'nodes');
      return r;
    }
    case 'image': {
      allowOnly(o, cmd, ['out', 'state', 'node']);
      const r: ControlRequest = { cmd, out: str(o, cmd, 'out') };
      if (o.state !== undefined) r.state = oneOf(o, cmd, 'state', ['durable', 'live', 'start'] as const);
      if (o.node !== undefined) r.node = int(o, cmd, 'node', 0, MAX_NODE);
      return r;
    }
    case 'fault':
      return { cmd, ...parseFault(o) };
  }
}
