// Validates one control request line into a typed ControlRequest; every problem is an Error naming
// the field, which the server turns into {"ok":false,"error":...}.
import { MUTATING_KINDS, POLICIES, type ControlRequest, type CrashPoint, type Fault } from './protocol.js';

const CMDS = ['status', 'arm', 'disarm', 'wait-frozen', 'crash', 'trace', 'image', 'fault', 'clear-faults', 'reset', 'shutdown'] as const;
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

export function parseCrashPoint(o: Obj, cmd = 'arm'): CrashPoint {
  allowOnly(o, cmd, ['atOp', 'kind', 'path', 'timing']);
  const point: CrashPoint = { atOp: int(o, cmd, 'atOp', 1), timing: oneOf(o, cmd, 'timing', ['before', 'after'] as const) };
  if (o.kind !== undefined) point.kind = oneOf(o, cmd, 'kind', MUTATING_KINDS);
  if (o.path !== undefined) point.path = str(o, cmd, 'path');
  return point;
}

export function parseFault(o: Obj): Fault {
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
    case 'status': case 'disarm': case 'trace': case 'clear-faults': case 'reset': case 'shutdown':
      allowOnly(o, cmd, []);
      return { cmd };
    case 'arm':
      return { cmd, ...parseCrashPoint(o) };
    case 'wait-frozen':
      allowOnly(o, cmd, ['timeoutMs']);
      return { cmd, timeoutMs: int(o, cmd, 'timeoutMs', 0, MAX_WAIT_MS) };
    case 'crash': {
      allowOnly(o, cmd, ['policy', 'seed']);
      const r: ControlRequest = { cmd };
      if (o.policy !== undefined) r.policy = oneOf(o, cmd, 'policy', POLICIES);
      if (o.seed !== undefined) r.seed = int(o, cmd, 'seed', Number.MIN_SAFE_INTEGER);
      return r;
    }
    case 'image': {
      allowOnly(o, cmd, ['out', 'state']);
      const r: ControlRequest = { cmd, out: str(o, cmd, 'out') };
      if (o.state !== undefined) r.state = oneOf(o, cmd, 'state', ['durable', 'live'] as const);
      return r;
    }
    case 'fault':
      return { cmd, ...parseFault(o) };
  }
}
