// The layout rule, checked: code the CLI and the daemon run never imports test code (a test file,
// the properties/ folder, a test framework), so `npm ci --omit=dev` and a packed install work.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './harness/dist-path.js';

function runtimeFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)[^'"`]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const TEST_ONLY_PACKAGES = ['vitest', '@fast-check/vitest', 'playwright-core'];

describe('layout', () => {
  it('no runtime module under src/ or fusefs/ imports a test file, properties/, or a test framework', () => {
    const offenders: string[] = [];
    for (const file of [...runtimeFiles('src'), ...runtimeFiles('fusefs')]) {
      for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const spec = m[1] ?? m[2];
        const rel = path.relative(REPO_ROOT, file);
        if (TEST_ONLY_PACKAGES.includes(spec)) offenders.push(`${rel} imports ${spec}`);
        if (!spec.startsWith('.')) continue;
        const target = path.relative(REPO_ROOT, path.resolve(path.dirname(file), spec));
        if (target.startsWith('properties') || /\.test\.(js|ts)$/.test(target) || target.includes(`${path.sep}testing`)) offenders.push(`${rel} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
