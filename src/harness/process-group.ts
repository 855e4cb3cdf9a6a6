// Drivers run in a process group of their own, and a power cut SIGKILLs the whole group: a driver
// that starts a server as its child (a broker, say) loses it at the cut as a machine would, with no
// help from the driver. Every group still alive is killed when this process exits, on SIGINT and on
// SIGTERM too, since a detached child is outside execa's own cleanup.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const live = new Set<number>();
let hooksInstalled = false;

/** SIGKILLs every process of the group now, without waiting; true if the group was there to kill. */
export function signalGroup(pgid: number | undefined): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, 'SIGKILL');
    return true;
  } catch {
    return false; // the group is gone already
  }
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const pgid of live) signalGroup(pgid);
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const pgid of live) signalGroup(pgid);
      // Whoever else listens (the daemon's cleanup) ends the process; alone, end it as the signal would.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  }
}

/** Spawn options that make the child the leader of a new process group (its pid is the group id). */
export const OWN_PROCESS_GROUP = { detached: true } as const;

/** Registers a group led by `pgid` so that it is killed if this process ends first. */
export function trackGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  installExitHooks();
  live.add(pgid);
}

interface ProcessStat {
  pid: number;
  comm: string;
  state: string;
  pgrp: number;
}

/** A process's or thread's stat file, read after the last ')' since comm may hold spaces and parentheses; null once it exited. */
function readStat(file: string, pid: number): ProcessStat | null {
  const stat = readProc(file);
  if (!stat) return null;
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), state, pgrp: Number(pgrp) };
}

/** Every process of /proc with its group. */
function processStats(): ProcessStat[] {
  return readdirSync('/proc').flatMap((pid) => {
    const p = /^\d+$/.test(pid) ? readStat(`/proc/${pid}/stat`, Number(pid)) : null;
    return p ? [p] : [];
  });
}

/**
 * The group's live processes, each with its state and the kernel function it waits in (for a
 * process that outlived SIGKILL: "D fuse_..." means a request the filesystem still holds).
 */
export function describeGroup(pgid: number): string {
  const rows = processStats().filter((p) => p.pgrp === pgid && p.state !== 'Z' && p.state !== 'X').map((p) => {
    const wchan = readProc(`/proc/${p.pid}/wchan`) || '-';
    // A main thread that waits for 20 s (a futex, a pipe) says little alone: its threads and kernel stack say what on.
    const stack = readProc(`/proc/${p.pid}/stack`).split('\n').filter(Boolean).slice(0, 6).map((l) => l.replace(/^\[<[0-9a-f]+>\] /, '')).join(' < ');
    return `pid ${p.pid} (${p.comm}) state ${p.state} in ${wchan}${stack ? ` [kernel stack: ${stack}]` : ''}${threadsOf(p.pid)}`;
  });
  return rows.length > 0 ? rows.join('; ') : 'none left';
}

/** How long gdb may take to attach, print every thread's stack and detach. */
const BACKTRACE_TIMEOUT_MS = 15_000;
/** The most of a backtrace an error message keeps. */
const BACKTRACE_MAX_CHARS = 4_000;

/**
 * Every thread's native stack of a live process, by gdb (attached, printed, detached: the process
 * goes on), for an error about a process that stopped answering; a sentence saying why not when gdb
 * is missing or fails. Frames without symbols (a JIT's) print as "??".
 */
export function nativeBacktrace(pid: number): string {
  try {
    const out = execFileSync('gdb', ['-p', String(pid), '-batch', '-nx', '-ex', 'set pagination off', '-ex', 'thread apply all bt 16'], { encoding: 'utf8', timeout: BACKTRACE_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
    const frames = out.split('\n').filter((l) => /^(Thread |#\d)/.test(l)).join('\n');
    // gdb prints the newest thread first: the main thread (Thread 1), the one that matters, would be cut off.
    const byThread = frames.split(/\n(?=Thread )/).sort((a, b) => threadNumber(a) - threadNumber(b));
    return frames ? byThread.join('\n').slice(0, BACKTRACE_MAX_CHARS) : 'gdb printed no stack';
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return e.code === 'ENOENT' ? 'no native backtrace: gdb is not installed (apt-get install -y gdb)' : `no native backtrace: gdb failed (${e.message.split('\n')[0]})`;
  }
}

/** The number gdb gives the thread whose stack `block` is ("Thread 3 (..."). */
const threadNumber = (block: string) => Number(/^Thread (\d+)/.exec(block)?.[1] ?? Infinity);

/** A /proc file's text, '' if it cannot be read (the process is gone, or the file is root's). */
function readProc(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** A process's other threads, counted by name, state and wait channel: ", threads: 4 libuv-worker S in futex_do_wait, ...". */
function threadsOf(pid: number): string {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`).filter((t) => t !== String(pid));
  } catch {
    return '';
  }
  const counts = new Map<string, number>();
  for (const tid of tids) {
    const t = readStat(`/proc/${pid}/task/${tid}/stat`, Number(tid));
    if (!t) continue;
    const key = `${t.comm} ${t.state} in ${readProc(`/proc/${pid}/task/${tid}/wchan`) || '-'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts.size > 0 ? `, threads: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}` : '';
}

/**
 * True while a process of the group is alive. A zombie does not count: it is dead, only not yet
 * reaped, and where init does not reap orphans (some containers) it never will be.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return processStats().some((p) => p.pgrp === pgid && p.state !== 'Z' && p.state !== 'X');
}

/**
 * SIGKILLs every process of the group and waits, up to `timeoutMs`, until none is left. A process
 * blocked in a request the filesystem holds dies only once that request is answered (the cut), so
 * call this after the cut. Returns false if some process outlived the wait.
 */
export async function killGroup(pgid: number | undefined, timeoutMs: number): Promise<boolean> {
  if (pgid === undefined) return true;
  signalGroup(pgid);
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
    signalGroup(pgid);
  }
  live.delete(pgid);
  return true;
}
