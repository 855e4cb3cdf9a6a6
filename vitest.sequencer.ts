// Longest test files first, so the two workers end together. vitest orders by the durations it
// cached from an earlier run; a fresh clone has none and would order by file size, which can leave
// a two-minute proof for last and add a minute to npm test. test-durations.json (seconds per file,
// refreshed by scripts/test-durations.mjs) stands in for the cache; files in neither go first.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const TABLE = 'test-durations.json';

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const table = JSON.parse(readFileSync(`${root}/${TABLE}`, 'utf8')) as { seconds: Record<string, number> };
    const expectedMs = (f: TestSpecification): number => {
      const file = relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${file}`)?.duration;
      if (cached !== undefined) return cached;
      const listed = table.seconds[file];
      return listed === undefined ? Infinity : listed * 1000;
    };
    return [...files].sort((a, b) => expectedMs(b) - expectedMs(a));
  }
}
