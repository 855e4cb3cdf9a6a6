// The artifact report in a real browser: Debian's Chromium, headless, driven by playwright-core
// (which never downloads a browser). Renders the committed fixture artifacts, checks what a reader
// needs is on screen, that the page logs no error and asks for nothing over the network, and takes
// the screenshot the README shows: into the test's temporary folder, and over the tracked
// docs/report-screenshot.png only when UPDATE_SCREENSHOT=1 is set.
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderArtifactReport } from './artifact-report.js';
import { readReportArtifact, writeArtifactReport } from './load.js';
import { preallocatedArtifact } from './testing.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, 'fixtures');
/** The README's picture: replaced only when UPDATE_SCREENSHOT=1, so a test run never changes a tracked file. */
const README_SCREENSHOT = path.resolve(HERE, '..', '..', 'docs', 'report-screenshot.png');
const UPDATE_SCREENSHOT = process.env.UPDATE_SCREENSHOT === '1';
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const INSTALL_HINT = 'sudo apt-get update && sudo apt-get install -y chromium';
const LAUNCH_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;
const PAGE_TIMEOUT_MS = 15_000;

/** A promise that settles within `ms`, or fails naming what took too long. */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

let tmp: string;
let context: BrowserContext | undefined;
const reports: Record<string, string> = {};

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed (${CHROMIUM} is missing); the report's browser test needs Debian's chromium package. Install it with:\n  ${INSTALL_HINT}\n(npm install in a powercut checkout does this when run as root)`);
  }
  tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-report-browser-'));
  for (const name of ['integrity-recovery-cut', 'at-least-once-crash-state']) {
    const dir = path.join(tmp, name);
    await cp(path.join(FIXTURES, name), dir, { recursive: true });
    reports[name] = await writeArtifactReport(dir);
  }
  // The README's picture names the folder as a run would, not this test's temporary one, so it does not change from run to run.
  const shown = { ...(await readReportArtifact(path.join(tmp, 'integrity-recovery-cut'))), dir: 'powercut-artifacts/integrity-recovery-cut' };
  reports.screenshot = path.join(tmp, 'screenshot.html');
  await writeFile(reports.screenshot, renderArtifactReport(shown));
  // 500 pre-allocation requests before the cut and the evidence: the timeline opens zoomed.
  reports.zoomed = path.join(tmp, 'zoomed.html');
  await writeFile(reports.zoomed, renderArtifactReport(preallocatedArtifact()));
  context = await bounded(
    chromium.launchPersistentContext(path.join(tmp, 'user-data'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: 1,
      timeout: LAUNCH_TIMEOUT_MS,
    }),
    LAUNCH_TIMEOUT_MS + 5_000,
    `starting ${CHROMIUM}`,
  );
}, 90_000);

afterAll(async () => {
  try {
    if (context) await bounded(context.close(), CLOSE_TIMEOUT_MS, 'closing Chromium');
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}, 30_000);

/** Opens a report and collects every console error, page error and network request it makes. */
async function open(name: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context!.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`network request: ${r.url()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(pathToFileURL(reports[name]).href, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
  // The script sets this when it has run: the page is complete, no sleep needed.
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: PAGE_TIMEOUT_MS });
  return { page, problems };
}

describe('artifact report in Chromium', () => {
  it('shows the timeline, the power cut, the highlighted request and the diff, without console errors', async () => {
    const { page, problems } = await open('integrity-recovery-cut');
    try {
      // Two cuts (the workload's and the recovery's), each with its own timeline.
      await expect.poll(() => page.locator('svg.tl-chart').count()).toBe(2);
      const labels = await page.locator('#cut-section-0 svg.tl-labels text.lane-label').allTextContents();
      expect(labels).toEqual(expect.arrayContaining(['directory entries', '/page.1', '/checkpoint.head', 'program: run 0 (workload)']));
      const chart = await page.locator('#cut-section-0 svg.tl-chart').boundingBox();
      expect(chart!.width).toBeGreaterThan(600);

      // The power cut: a visible red line with its label.
      const cut = page.locator('#svg-cut-0');
      expect(await cut.isVisible()).toBe(true);
      // A vertical line has no width, so visibility is its height and its colour.
      const line = await cut.locator('line').boundingBox();
      expect(line!.height).toBeGreaterThan(100);
      expect(await cut.locator('line').evaluate((el) => getComputedStyle(el).stroke)).toBe('rgb(220, 38, 38)');
      expect(await cut.locator('text').textContent()).toBe('power cut');
      expect(await page.locator('#cut-section-0 .cut-info strong').first().textContent()).toContain('power cut after request 16 (applied, never answered)');

      // The torn page write of event 2, highlighted on the chart and in the log, numbered as evidence.
      const request = page.locator('g.req.hl[data-ref="c0-op16"]');
      expect(await request.isVisible()).toBe(true);
      expect(await request.locator('title').textContent()).toContain('request 16 write /page.1 offset 140 length 3016');
      const halo = await request.locator('rect.halo').evaluate((el) => getComputedStyle(el).fill);
      expect(halo).toBe('rgb(253, 224, 71)');
      expect(await page.locator('tr#c0-op16.hl').isVisible()).toBe(true);
      expect(await page.locator('#violation-1 .evidence li').count()).toBeGreaterThanOrEqual(3);
      expect(await page.locator('#violation-1 .msg').textContent()).toContain('integrity: run 2 (drain, final): seq 2 (event id 2) has different bytes');

      // The diff: live vs durable of page.1, differing bytes marked.
      expect(await page.locator('#cut-section-0 table.files').textContent()).toContain('differ: bytes 140–3,155 (3,016)');
      const marks = page.locator('#cut-section-0 .hexdump mark');
      expect(await marks.count()).toBeGreaterThan(0);
      expect(await marks.first().isVisible()).toBe(true);


      // Clicking the request selects it in the log too, and shows its details.
      await request.click();
      await page.waitForSelector('tr#c0-op16.selected', { timeout: PAGE_TIMEOUT_MS });
      expect(await page.locator('#details').isVisible()).toBe(true);
      expect(await page.locator('#details').textContent()).toContain('request 16 write /page.1');

      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('takes the README screenshot: the header, the violation and the first timeline', async () => {
    const { page, problems } = await open('screenshot');
    try {
      const box = await page.locator('#cut-section-0 .timeline').boundingBox();
      const clip = { x: 0, y: 0, width: 1280, height: Math.ceil(box!.y + box!.height + 6) };
      // What the picture is for: each of them on screen, and within the part the screenshot keeps.
      const header = page.locator('header h1');
      expect(await header.textContent()).toBe('FAIL integrity — powercut-queue (variant no-crc-on-recovery)');
      expect(await page.locator('header .sub').textContent()).toBe('powercut-artifacts/integrity-recovery-cut');
      const violation = page.locator('#violation-1 .msg');
      expect(await violation.textContent()).toContain('integrity: run 2 (drain, final): seq 2 (event id 2) has different bytes');
      const timeline = page.locator('#cut-section-0 .timeline svg.tl-chart');
      expect(await page.locator('#cut-section-0 .timeline svg.tl-labels text.lane-label').allTextContents()).toEqual(expect.arrayContaining(['directory entries', '/page.1']));
      expect(await page.locator('#cut-section-0 .timeline #svg-cut-0').count(), 'the power cut on the first timeline').toBe(1);
      for (const [what, shown] of [['the header', header], ['the violation', violation], ['the first timeline', timeline]] as const) {
        expect(await shown.isVisible(), `${what} is visible`).toBe(true);
        const b = (await shown.boundingBox())!;
        expect(b.y, `${what} starts inside the screenshot`).toBeGreaterThanOrEqual(clip.y);
        expect(b.y + b.height, `${what} ends inside the screenshot`).toBeLessThanOrEqual(clip.y + clip.height);
        expect(b.x, `${what} starts inside the screenshot's width`).toBeLessThan(clip.width);
      }
      const shot = path.join(tmp, 'report-screenshot.png');
      await page.screenshot({ path: shot, fullPage: true, clip });
      expect(existsSync(shot)).toBe(true);
      expect(problems).toEqual([]);
      if (UPDATE_SCREENSHOT) await copyFile(shot, README_SCREENSHOT);
    } finally {
      await page.close();
    }
  });

  it('renders an exhaustive-mode crash state with its evidence, without console errors', async () => {
    const { page, problems } = await open('at-least-once-crash-state');
    try {
      expect(await page.locator('svg.tl-chart').count()).toBe(1);
      expect(await page.locator('g.line.hl[data-ref="r0-l5"]').isVisible()).toBe(true);
      expect(await page.locator('g.req.hl[data-ref="c0-op15"]').isVisible()).toBe(true);
      expect(await page.locator('.beyond-shade').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('opens a long run zoomed to the cut and the evidence, shows the whole run on request, and prints the window', async () => {
    const { page, problems } = await open('zoomed');
    try {
      const win = page.locator('#cut-section-0 .tl-window');
      const whole = page.locator('#cut-section-0 details.tl-whole');
      expect(await page.locator('#cut-section-0 .tl-zoom-note').textContent()).toContain('Left out: requests 1–446');
      // The cut and the evidence on screen, in a 1280 px window, without scrolling the chart.
      expect(await win.locator('.tl-scroll').evaluate((el) => el.scrollLeft)).toBe(0);
      for (const shape of ['#svg-cut-0 line', 'g.req.hl[data-ref="c0-op504"]', 'g.line.hl[data-ref="r0-l5"]']) {
        const box = await win.locator(shape).boundingBox();
        expect(box, shape).not.toBeNull();
        expect(box!.x, shape).toBeGreaterThan(200);
        expect(box!.x + box!.width, shape).toBeLessThan(1280);
      }
      expect(await whole.locator('svg.tl-chart').isVisible()).toBe(false);

      // The control swaps in the whole run, and back.
      await whole.locator('summary').click();
      expect(await whole.locator('svg.tl-chart').isVisible()).toBe(true);
      expect(await win.isVisible()).toBe(false);
      await whole.locator('summary').click();
      expect(await win.isVisible()).toBe(true);

      // A log row outside the window shows the whole run, with that request selected on it.
      await page.locator('#cut-section-0 details.log > summary').click();
      await page.locator('tr#c0-op1').click();
      await page.waitForSelector('#cut-section-0 details.tl-whole g.req.selected[data-ref="c0-op1"]', { timeout: PAGE_TIMEOUT_MS });
      expect(await whole.locator('g.req[data-ref="c0-op1"]').isVisible()).toBe(true);
      await whole.locator('summary').click();

      // On paper: the window, whole and unscrolled, without the control.
      await page.emulateMedia({ media: 'print' });
      expect(await whole.isVisible()).toBe(false);
      const cut = await win.locator('#svg-cut-0 line').boundingBox();
      expect(cut!.x + cut!.width).toBeLessThan(1280);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('reads without JavaScript: chart, evidence and log are in the page itself', async () => {
    const page = await context!.newPage();
    try {
      page.setDefaultTimeout(PAGE_TIMEOUT_MS);
      const cdp = await context!.newCDPSession(page);
      await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
      await page.goto(pathToFileURL(reports['integrity-recovery-cut']).href, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
      expect(await page.locator('body').getAttribute('data-ready')).toBeNull();
      expect(await page.locator('svg.tl-chart').first().isVisible()).toBe(true);
      expect(await page.locator('#svg-cut-0').isVisible()).toBe(true);
      expect(await page.locator('tr#c0-op16.hl').isVisible()).toBe(true);
      expect(await page.locator('#violation-1 .evidence').isVisible()).toBe(true);
    } finally {
      await page.close();
    }
  });
});
