// Reading an ext4 crash state back in userspace: `e2fsck -fy` (replays the journal as a mount
// would), `e2fsck -fn` (must then find nothing), `debugfs` lists names with inode numbers and dumps
// the files. The image file is the caller's scratch copy (e2fsck changes it).
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DIR_NAMES } from './history.js';
import { IGNORED_NAMES, sortState, type FileEntry, type FileState } from './file-state.js';

const TOOL_TIMEOUT_MS = 60_000;

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool with a bounded wait; a non-zero exit is a result, not an error (a missing tool is). */
export function runTool(cmd: string, args: readonly string[], timeoutMs = TOOL_TIMEOUT_MS, cwd?: string): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 << 20, killSignal: 'SIGKILL', cwd }, (err, stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') return reject(new Error(`${cmd}: ${err.message}`));
      if (err && err.killed) return reject(new Error(`${cmd} ${args.join(' ')} did not finish within ${timeoutMs / 1000} s`));
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The filesystem kernel-check runs on: 4 KiB blocks, itable and journal initialised at mkfs (a small image otherwise gets 1 KiB blocks and background writes). */
export const MKFS_ARGS = ['-q', '-F', '-b', '4096', '-E', 'lazy_itable_init=0,lazy_journal_init=0'];

export async function makeExt4(imagePath: string, fsBytes: number, imageBytes: number): Promise<void> {
  await writeFile(imagePath, '');
  await runTool('truncate', ['-s', String(imageBytes), imagePath]);
  const r = await runTool('mkfs.ext4', [...MKFS_ARGS, imagePath, String(fsBytes / 4096)]);
  if (r.code !== 0) throw new Error(`mkfs.ext4 failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
}

/** e2fsck -fy's lines that say more than a free-count correction or a pass heading. */
export function unusualFsckLines(stdout: string): string[] {
  const usual = [/^Pass \d/, /^Free (blocks|inodes) count wrong/, /^\S+: \*+ FILE SYSTEM WAS MODIFIED \*+/, /^\S+: \d+\/\d+ files/, /^Padding at end of inode bitmap/, /^$/, /^Fix\? yes/,
    /^Block bitmap differences:/, /^Inode bitmap differences:/, /^\S+: recovering journal/, /^Journal transaction \d+ was corrupt, replay was aborted\./, /^Clearing orphaned inode/, /^Setting free (inodes|blocks) count/];
  return stdout.split('\n').map((l) => l.trim()).filter((l) => !usual.some((re) => re.test(l)));
}

export type Extracted = { ok: true; state: FileState; fsckNotes: string[] } | { ok: false; reason: string };

/** The file-level state of the ext4 image at `imagePath` (changed: the journal is replayed into it). */
export async function extractState(imagePath: string, scratch: string): Promise<Extracted> {
  const fix = await runTool('e2fsck', ['-fy', imagePath]);
  if (fix.code >= 4) return { ok: false, reason: `e2fsck -fy left errors (exit ${fix.code}): ${fix.stdout.trim().split('\n').slice(-6).join(' | ')}` };
  const check = await runTool('e2fsck', ['-fn', imagePath]);
  if (check.code !== 0) return { ok: false, reason: `e2fsck -fn after e2fsck -fy is not clean (exit ${check.code}): ${check.stdout.trim().split('\n').slice(-6).join(' | ')}` };
  const out = path.join(scratch, 'rdump');
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const cmds = path.join(scratch, 'debugfs.cmds');
  await writeFile(cmds, ['ls -p /', ...DIR_NAMES.map((d) => `ls -p /${d}`), `rdump / ${out}`, ''].join('\n'));
  const dbg = await runTool('debugfs', ['-f', cmds, imagePath]);
  if (dbg.code !== 0) return { ok: false, reason: `debugfs failed (exit ${dbg.code}): ${dbg.stderr.trim()}` };
  const listing = parseDebugfsListings(dbg.stdout);
  const dirs: string[] = [];
  const files: FileEntry[] = [];
  for (const [dir, entries] of listing) {
    for (const e of entries) {
      const p = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.name === '.' || e.name === '..' || (dir === '' && IGNORED_NAMES.has(e.name))) continue;
      if (e.kind === 'dir') {
        if (!(DIR_NAMES as readonly string[]).includes(p)) return { ok: false, reason: `unexpected directory ${p}` };
        dirs.push(p);
      } else if (e.kind === 'file') {
        const data = await readFile(path.join(out, p));
        if (data.length !== e.size) return { ok: false, reason: `${p}: debugfs lists ${e.size} bytes, rdump wrote ${data.length}` };
        files.push({ path: p, inode: e.inode, data });
      } else return { ok: false, reason: `${p}: unexpected inode kind (mode ${e.mode.toString(8)})` };
    }
  }
  return { ok: true, state: sortState({ dirs, files }), fsckNotes: unusualFsckLines(fix.stdout) };
}

export interface ListedEntry {
  inode: number;
  mode: number;
  kind: 'dir' | 'file' | 'other';
  name: string;
  size: number;
}

/**
 * debugfs -f's output for `ls -p DIR` commands: per directory ('' for the root), its entries
 * (`/inode/mode/uid/gid/name/size/`). A directory debugfs could not find is left out.
 */
export function parseDebugfsListings(stdout: string): Map<string, ListedEntry[]> {
  const out = new Map<string, ListedEntry[]>();
  let current: ListedEntry[] | undefined;
  for (const line of stdout.split('\n')) {
    const cmd = /^debugfs: ls -p \/(\S*)$/.exec(line);
    if (cmd) {
      current = [];
      out.set(cmd[1], current);
      continue;
    }
    if (line.startsWith('debugfs: ')) {
      current = undefined;
      continue;
    }
    const m = /^\/(\d+)\/(\d+)\/\d+\/\d+\/(.*)\/(\d*)\/$/.exec(line);
    if (!m || !current) continue;
    const mode = parseInt(m[2], 8);
    const type = mode & 0o170000;
    current.push({ inode: Number(m[1]), mode, kind: type === 0o040000 ? 'dir' : type === 0o100000 ? 'file' : 'other', name: m[3], size: Number(m[4] || 0) });
  }
  return out;
}
