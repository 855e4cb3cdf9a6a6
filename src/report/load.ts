// The I/O around the pure renderers: read an artifact folder with its images, write report.html
// next to it, write a gate run's report, and open a report in a browser where there is one.
import { spawn } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { access, lstat, mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readArtifact } from '../harness/artifacts.js';
import { renderArtifactReport } from './artifact-report.js';
import type { ExternalDriver } from '../harness/target.js';
import { ARTIFACT_REPORT_FILE, gateArtifactDirs, GATE_REPORT_FILE, renderGateReport, type GateReportInput } from './gate-report.js';
import { EXTERNAL_TARGET_NAME } from './header.js';
import type { CutImages, ImageFiles, ReportArtifact } from './types.js';

/** Bytes read per image file: enough for any queue page; a bigger file is compared by its start (the report says so). */
export const MAX_IMAGE_FILE_BYTES = 4 * 1024 * 1024;
/** Entries read per image folder, so a runaway workload cannot make the report unbounded. */
const MAX_IMAGE_ENTRIES = 5_000;

async function readPrefix(file: string, sizeBytes: number): Promise<Uint8Array> {
  const want = Math.min(sizeBytes, MAX_IMAGE_FILE_BYTES);
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(buf, got, want - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, got);
  } finally {
    await fh.close();
  }
}

/** One image folder as path -> entry; undefined when the folder is not there. */
export async function readImage(root: string): Promise<ImageFiles | undefined> {
  if (!existsSync(root)) return undefined;
  const out: ImageFiles = new Map();
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (out.size >= MAX_IMAGE_ENTRIES) return;
      const name = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(root, name);
      const st = await lstat(full);
      if (st.isDirectory()) {
        out.set(name, { kind: 'dir', sizeBytes: 0 });
        await walk(name);
      } else if (st.isFile()) out.set(name, { kind: 'file', sizeBytes: st.size, bytes: await readPrefix(full, st.size) });
      else out.set(name, { kind: 'other', sizeBytes: st.size });
    }
  };
  await walk('');
  return out;
}

/** An artifact folder with its images, ready for renderArtifactReport; errors name the file that is wrong. */
export async function readReportArtifact(dir: string): Promise<ReportArtifact> {
  const stored = await readArtifact(dir);
  const images: CutImages[] = [];
  const count = Math.max(stored.cuts.length, 1);
  for (let k = 0; k < count; k++) {
    const base = path.join(dir, 'images', `cut-${k}`);
    images.push({ live: await readImage(`${base}-live`), durable: await readImage(`${base}-durable`), afterCrash: await readImage(`${base}-after-crash`) });
  }
  return { ...stored, images };
}

/** Writes DIR/report.html for the artifact folder DIR and returns its path. */
export async function writeArtifactReport(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  const html = renderArtifactReport(await readReportArtifact(abs));
  const file = path.join(abs, ARTIFACT_REPORT_FILE);
  await writeFile(file, html);
  return file;
}

/**
 * report.html beside an artifact just written, for the suites, the scenarios and the gate: a failure
 * to draw it costs a warning on stderr, never the artifact or the verdict.
 */
export async function drawArtifactReport(dir: string | undefined): Promise<void> {
  if (dir === undefined) return;
  try {
    await writeArtifactReport(dir);
  } catch (err) {
    process.stderr.write(`powercut: could not write ${path.join(dir, ARTIFACT_REPORT_FILE)}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

/**
 * Writes DIR/index.html for a gate run and returns its path. Each failing case's artifact gets its
 * report.html first (when it has none yet), so every link works; one that cannot be written is
 * named in the page instead of failing the gate's report.
 */
export async function writeGateReport(dir: string, report: GateReportInput): Promise<string> {
  const abs = path.resolve(dir);
  await mkdir(abs, { recursive: true });
  const missingReports = new Map<string, string>();
  for (const artifactDir of gateArtifactDirs(report)) {
    if (existsSync(path.join(artifactDir, ARTIFACT_REPORT_FILE))) continue;
    try {
      await writeArtifactReport(artifactDir);
    } catch (err) {
      missingReports.set(artifactDir, (err as Error).message);
    }
  }
  const driver = report.driver ?? (report.target === EXTERNAL_TARGET_NAME ? await driverOfArtifacts(gateArtifactDirs(report)) : undefined);
  const file = path.join(abs, GATE_REPORT_FILE);
  await writeFile(file, renderGateReport(driver ? { ...report, driver } : report, { reportDir: abs, missingReports }));
  return file;
}

/** The driver command an external target's artifacts recorded (the first case.json that has one), for a gate run told only "external". */
async function driverOfArtifacts(dirs: readonly string[]): Promise<ExternalDriver | undefined> {
  for (const dir of dirs) {
    try {
      const d = (JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8')) as { driver?: Partial<ExternalDriver> }).driver;
      if (typeof d?.command === 'string' && typeof d.cwd === 'string') return { command: d.command, cwd: d.cwd };
    } catch {
      // not an artifact we can read: its own report says so
    }
  }
  return undefined;
}

export interface OpenResult {
  /** The report that was written. */
  reportPath: string;
  opened: boolean;
  /** Why no browser was opened, in words. */
  reason?: string;
}

export interface OpenOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Starts the opener; the default spawns it detached. Tests pass their own. */
  launch?: (command: string, args: string[]) => Promise<void>;
}

/** How long the opener may take to start before we give up on it (it keeps running on its own after). */
const OPENER_START_TIMEOUT_MS = 5_000;

async function onPath(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    try {
      await access(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** The command that opens a file in the desktop's browser here, or why there is none. */
export async function browserOpener(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<{ command: string } | { reason: string }> {
  if (platform === 'darwin') return (await onPath('open', env)) ? { command: 'open' } : { reason: "'open' was not found on the PATH" };
  if (platform !== 'linux' && platform !== 'freebsd' && platform !== 'openbsd') return { reason: `opening a browser is not supported on ${platform}` };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { reason: 'no display (DISPLAY and WAYLAND_DISPLAY are unset)' };
  if (!(await onPath('xdg-open', env))) return { reason: "xdg-open was not found on the PATH (Debian package xdg-utils)" };
  return { command: 'xdg-open' };
}

function launchDetached(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.unref();
      reject(new Error(`${command} did not start within ${OPENER_START_TIMEOUT_MS} ms`));
    }, OPENER_START_TIMEOUT_MS);
    child.once('spawn', () => {
      clearTimeout(timer);
      child.unref();
      resolve();
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** `powercut replay DIR --open`: writes DIR/report.html and opens it where a browser can be shown; otherwise only returns the path. */
export async function openArtifactReport(dir: string, options: OpenOptions = {}): Promise<OpenResult> {
  const reportPath = await writeArtifactReport(dir);
  const opener = await browserOpener(options.env ?? process.env, options.platform ?? process.platform);
  if ('reason' in opener) return { reportPath, opened: false, reason: opener.reason };
  try {
    await (options.launch ?? launchDetached)(opener.command, [reportPath]);
    return { reportPath, opened: true };
  } catch (err) {
    return { reportPath, opened: false, reason: `${opener.command} failed: ${(err as Error).message}` };
  }
}

/** One line for the terminal: where the report is and whether a browser shows it. */
export function formatOpenResult(r: OpenResult): string {
  return r.opened ? `report: ${r.reportPath} (opened in the browser)` : `report: ${r.reportPath}${r.reason ? ` (not opened: ${r.reason}; open it in a browser)` : ''}`;
}
