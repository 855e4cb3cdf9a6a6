// A summary of a V8 .cpuprofile by self time, per function and per part of the daemon (from
// bench/fuse-ceiling-lib.ts on branch fs-ceiling, whose C reference filesystem and mount helper
// stay there). Used by `npm run bench:fs -- --profile`.
import { readFileSync } from 'node:fs';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  byFunction: { name: string; ms: number; pct: number }[];
  byCategory: { name: string; ms: number; pct: number }[];
}

const BUFFER_FNS = new Set(['_copyActual', 'FastBuffer', '_fill', 'allocate', 'allocUnsafe', 'createUnsafeBuffer', 'from', 'fromArrayLike', 'fromArrayBuffer', 'copy', 'subarray', 'alloc', 'set', 'slice']);

/** Which part of the daemon a frame belongs to (by its script and name). */
function categoryOf(url: string, fn: string): string {
  if (fn === '(idle)') return 'idle (epoll wait)';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'native outside JS: uv_async dispatch, napi_make_callback, args';
  // process.nextTick(nativeSignal): the native fuse_native_signal_* (argument checks, detach, uv_sem_post) runs as its self time.
  if (fn === 'processTicksAndRejections') return 'fuse-native signal: nextTick -> napi -> uv_sem_post';
  if ((url.includes('buffer') || url === '') && BUFFER_FNS.has(fn)) return 'Buffer alloc/copy/fill (adapter + model copies)';
  if (url.includes('fuse-native/index.js')) return 'fuse-native index.js (dispatch, signal, nextTick)';
  // The fast paths call the native signal (detach, uv_sem_post) from these closures: its self time, and any preemption by the woken FUSE thread, lands here.
  if (url.includes('mount-generation')) return 'fusefs/mount-generation: request handlers + native signal (uv_sem_post)';
  if (url.includes('fuse-adapter')) return 'fusefs/fuse-adapter';
  if (url.includes('request-gate') || url.includes('/trace.') || url.includes('crash-point')) return 'fusefs/request-gate + trace';
  if (url.includes('/model/')) return 'fusefs/model';
  if (url.includes('faults')) return 'fusefs/faults';
  if (url.startsWith('node:') || url === '') return 'node internals / builtins';
  return 'other JS';
}

/**
 * Self time per function and per category from a V8 .cpuprofile file, counting only samples inside
 * `windows` (CLOCK_MONOTONIC microseconds, as process.hrtime in any process) when given.
 */
export function summarizeCpuProfile(path: string, windows?: [number, number][], top = 14): ProfileSummary {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (windows && !windows.some(([a, b]) => t >= a && t <= b)) continue;
    // A sample stands for the interval up to the next one.
    const dt = p.timeDeltas[i + 1] ?? 0;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
  }
  const fnTotals = new Map<string, number>();
  const catTotals = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.replace(/^.*\/(node_modules\/)?/, '');
    const name = functionName.startsWith('(') ? functionName : `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    fnTotals.set(name, (fnTotals.get(name) ?? 0) + us);
    const cat = categoryOf(url, functionName);
    catTotals.set(cat, (catTotals.get(cat) ?? 0) + us);
    total += us;
    if (functionName === '(idle)') idle += us;
  }
  const busy = total - idle;
  const rows = (m: Map<string, number>, skipIdle: boolean) => [...m]
    .filter(([k]) => !(skipIdle && (k === '(idle)' || k.startsWith('idle'))))
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => ({ name, ms: us / 1000, pct: busy > 0 ? (100 * us) / busy : 0 }));
  return { totalMs: total / 1000, busyMs: busy / 1000, byFunction: rows(fnTotals, true).slice(0, top), byCategory: rows(catTotals, true) };
}
