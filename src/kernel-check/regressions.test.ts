// Real ext4 states kernel-check found outside the journaled model, kept as they were saved (history,
// real state, the steps that may have completed): each must now be a state of journaled. No VM.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { replaySaved } from './check.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'regressions');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('real ext4 states once outside journaled', () => {
  it('are all kept here', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
  });
  for (const f of files) {
    it(`${f} is a state of journaled`, async () => {
      const r = await replaySaved(path.join(dir, f));
      expect(r.member, r.text).toBe(true);
    });
  }
});
