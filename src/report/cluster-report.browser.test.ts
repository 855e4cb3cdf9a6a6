// A cluster artifact's report in a real browser (Debian's Chromium, headless, as
// report.browser.test.ts): the node lane groups are on screen in node order, the cut shows on the
// cut node's group only, the restart is visible, and the page logs no error. The screenshot goes
// to the test's temporary folder, or to CLUSTER_REPORT_SCREENSHOT when set (to look at it).
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderArtifactReport } from './artifact-report.js';
import { clusterArtifact } from './testing.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LAUNCH_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;
const PAGE_TIMEOUT_MS = 15_000;

function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

let tmp: string;
let context: BrowserContext | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed (${CHROMIUM} is missing); install it with: sudo apt-get update && sudo apt-get install -y chromium`);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'powercut-cluster-report-'));
  context = await bounded(chromium.launchPersistentContext(path.join(tmp, 'user-data'), {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, timeout: LAUNCH_TIMEOUT_MS,
  }), LAUNCH_TIMEOUT_MS + 5_000, `starting ${CHROMIUM}`);
}, 90_000);

afterAll(async () => {
  try {
    if (context) await bounded(context.close(), CLOSE_TIMEOUT_MS, 'closing Chromium');
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}, 30_000);

describe('a cluster artifact\'s report in Chromium', () => {
  it('shows a lane group per node, the cut on node 1\'s group only and its restart, without console errors', async () => {
    const file = path.join(tmp, 'cluster.html');
    await writeFile(file, renderArtifactReport(clusterArtifact()));
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
    try {
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
      await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: PAGE_TIMEOUT_MS });
      const heads = page.locator('#cut-section-0 svg.tl-labels g.node-label text');
      expect(await heads.allTextContents()).toEqual(['node 0', 'node 1', 'node 2']);
      const y = await Promise.all([0, 1, 2].map(async (k) => (await heads.nth(k).boundingBox())!.y));
      expect(y[0]).toBeLessThan(y[1]);
      expect(y[1]).toBeLessThan(y[2]);
      // The cut's line spans node 1's group: below node 1's header, above node 2's.
      const cutLine = await page.locator('#svg-cut-0 line').boundingBox();
      expect(await page.locator('#svg-cut-0 line').count()).toBe(1);
      expect(cutLine!.y).toBeGreaterThanOrEqual(y[1] - 12);
      expect(cutLine!.y + cutLine!.height).toBeLessThanOrEqual(y[2]);
      expect(await page.locator('#svg-cut-0 text').textContent()).toBe('power cut: node 1');
      const restart = page.locator('#cut-section-0 g.node-event.restarted[data-node="1"]').first();
      expect(await restart.isVisible()).toBe(true);
      expect(await restart.locator('circle').evaluate((el) => getComputedStyle(el).fill)).toBe('rgb(22, 163, 74)');
      const shot = path.join(tmp, 'cluster.png');
      await page.locator('#cut-section-0').screenshot({ path: shot });
      if (process.env.CLUSTER_REPORT_SCREENSHOT) await copyFile(shot, process.env.CLUSTER_REPORT_SCREENSHOT);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
