// Every known-bad variant of every target is proven caught by some suite: its data says which
// (KnownBadVariant.provenBy), and this checks that each proof it names is one a test runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/harness/dist-path.js';
import { findTarget, TARGET_NAMES } from '../src/targets/index.js';
import { SCENARIOS } from '../scenarios/index.js';
import { PROOF_TESTS, variantsProvenBy } from './variant-proofs.js';

const variants = TARGET_NAMES.flatMap((t) => Object.entries(findTarget(t).knownBad).map(([name, v]) => ({ target: t, name, v })));

describe('every known-bad variant is proven caught', () => {
  it('the targets have variants (so the checks below check something)', () => {
    expect(variants.length).toBeGreaterThanOrEqual(19);
  });
  it.each(variants.map((x) => [`${x.target} ${x.name}`, x] as const))('%s: by at least one suite, each of which runs it', (_label, { target, name, v }) => {
    expect(v.provenBy.length, `${target} ${name} names no proof`).toBeGreaterThan(0);
    for (const proof of v.provenBy) {
      if (proof === 'scenario') {
        expect(SCENARIOS.some((s) => (s.case.target ?? 'powercut-queue') === target && s.exposes === name), `no scenario of ${target} exposes ${name}`).toBe(true);
        continue;
      }
      // Exhaustive mode injects no fault: it cannot prove a variant whose bug needs one.
      if (proof === 'exhaustive') expect(v.needs, `${target} ${name}: exhaustive mode cannot show a fault's bug`).not.toBe('fault');
      const file = PROOF_TESTS[target]?.[proof];
      expect(file, `no test runs the ${proof} proofs of ${target}`).toBeDefined();
      expect(readFileSync(path.join(REPO_ROOT, file!), 'utf8'), `${file} must take its variants from variantsProvenBy('${target}', '${proof}')`).toContain(`variantsProvenBy('${target}', '${proof}')`);
      expect(variantsProvenBy(target, proof)).toContain(name);
    }
  });
  it('a scenario that exposes a variant is listed among its proofs', () => {
    for (const s of SCENARIOS) {
      const target = s.case.target ?? 'powercut-queue';
      expect(findTarget(target).knownBad[s.exposes].provenBy, `scenario ${s.name} exposes ${s.exposes}`).toContain('scenario');
    }
  });
});
