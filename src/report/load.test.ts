// The loader and the --open helper, on the committed fixture artifacts (no FUSE mount needed).
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { browserOpener, formatOpenResult, MAX_IMAGE_FILE_BYTES, openArtifactReport, readImage, writeArtifactReport } from './load.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-report-test-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function fixture(name: string): Promise<string> {
  const dir = path.join(tmp, name);
  await cp(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

describe('writeArtifactReport', () => {
  it('writes report.html into a random-cut artifact with two cuts: two timelines, evidence, file diffs', async () => {
    const dir = await fixture('integrity-recovery-cut');
    const file = await writeArtifactReport(dir);
    expect(file).toBe(path.join(dir, 'report.html'));
    const html = await readFile(file, 'utf8');
    expect(html.match(/class="tl-chart"/g)).toHaveLength(2);
    expect(html).toContain('power cut after request 16 (applied, never answered)');
    expect(html).toContain('power cut after request 14 (applied, never answered)');
    // The torn page write of event 2 is the evidence of the integrity violation.
    expect(html).toMatch(/<g class="req k-write[^"]*\brole-lost\b[^"]*" data-ref="c0-op16"/);
    expect(html).toContain('differ: bytes 140–3,155 (3,016)');
    expect(html).toContain(`powercut replay ${dir}`);
  });

  it('reports an exhaustive-mode crash state from its state image and the recorded trace', async () => {
    const dir = await fixture('at-least-once-crash-state');
    const html = await readFile(await writeArtifactReport(dir), 'utf8');
    expect(html).toContain('power cut after request 18 (crash state of the recorded run)');
    expect(html).toMatch(/<g class="line t-durable hl role-claim" data-ref="r0-l5"/);
    expect(html).toMatch(/data-ref="c0-op15"/);
    expect(html).toContain('crash state (bytes)');
  });

  it('names the file that is wrong when the folder is not an artifact', async () => {
    await expect(writeArtifactReport(tmp)).rejects.toThrow(/case\.json: cannot read .*is this an artifact folder\?/);
  });

  it('reads at most MAX_IMAGE_FILE_BYTES of an image file, and knows its real size', async () => {
    const dir = path.join(tmp, 'img');
    await cp(path.join(FIXTURES, 'integrity-recovery-cut', 'images', 'cut-0-live'), dir, { recursive: true });
    await writeFile(path.join(dir, 'big'), Buffer.alloc(MAX_IMAGE_FILE_BYTES + 10));
    const img = await readImage(dir);
    expect(img!.get('big')!.sizeBytes).toBe(MAX_IMAGE_FILE_BYTES + 10);
    expect(img!.get('big')!.bytes!.length).toBe(MAX_IMAGE_FILE_BYTES);
    expect(img!.get('page.1')!.sizeBytes).toBe(3156);
    expect(await readImage(path.join(tmp, 'absent'))).toBeUndefined();
  });
});

describe('replay --open helper', () => {
  it('opens nothing without a display, and says why', async () => {
    expect(await browserOpener({ PATH: '/usr/bin:/bin' }, 'linux')).toEqual({ reason: 'no display (DISPLAY and WAYLAND_DISPLAY are unset)' });
    expect(await browserOpener({ PATH: tmp, DISPLAY: ':0' }, 'linux')).toEqual({ reason: 'xdg-open was not found on the PATH (Debian package xdg-utils)' });
    const dir = await fixture('integrity-recovery-cut');
    let launched = false;
    const r = await openArtifactReport(dir, { env: { PATH: '/usr/bin:/bin' }, platform: 'linux', launch: async () => { launched = true; } });
    expect(r).toEqual({ reportPath: path.join(dir, 'report.html'), opened: false, reason: 'no display (DISPLAY and WAYLAND_DISPLAY are unset)' });
    expect(launched).toBe(false);
    expect(existsSync(r.reportPath)).toBe(true);
    expect(formatOpenResult(r)).toBe(`report: ${r.reportPath} (not opened: no display (DISPLAY and WAYLAND_DISPLAY are unset); open it in a browser)`);
  });

  it('opens the report with xdg-open where there is a display', async () => {
    const bin = path.join(tmp, 'bin');
    await cp(path.join(FIXTURES, 'README.md'), path.join(bin, 'xdg-open'));
    await chmod(path.join(bin, 'xdg-open'), 0o755);
    const env = { PATH: bin, WAYLAND_DISPLAY: 'wayland-0' };
    expect(await browserOpener(env, 'linux')).toEqual({ command: 'xdg-open' });
    const dir = await fixture('integrity-recovery-cut');
    const calls: string[][] = [];
    const r = await openArtifactReport(dir, { env, platform: 'linux', launch: async (cmd, args) => { calls.push([cmd, ...args]); } });
    expect(r).toEqual({ reportPath: path.join(dir, 'report.html'), opened: true });
    expect(calls).toEqual([['xdg-open', path.join(dir, 'report.html')]]);
    // A launcher that fails leaves the path and the reason.
    const failed = await openArtifactReport(dir, { env, platform: 'linux', launch: async () => { throw new Error('spawn xdg-open EACCES'); } });
    expect(failed.opened).toBe(false);
    expect(failed.reason).toBe('xdg-open failed: spawn xdg-open EACCES');
  });
});
