// The cause of each documented finding (docs/findings/<target>/<finding>), as its artifact stores it
// (cause.json, written by `powercut explain` on the artifact): the kind and path pattern each finding
// is, consistent with the artifact's own recording, and quoted in docs/leveldb.md and docs/nats.md.
// A damaged-disk finding's cause is read off its case, so it is computed here again from the artifact.
// The power-cut findings' causes cannot be: searching needs the written bytes, which an artifact does
// not keep, so `powercut explain` records the case again (a concurrent server may record another
// interleaving; the cause then says which state stood for the artifact's).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedPath, type CauseKind } from '../harness/cause/cause.js';
import { causeOfCase } from '../harness/cause/of-case.js';
import { readArtifact } from '../harness/artifacts.js';
import { REPO_ROOT } from '../harness/dist-path.js';

const STREAM = '/jetstream/$G/streams/POWERCUT';

/** What each finding's cause is: its kind and a path pattern its key names. */
const EXPECTED: Record<string, Record<string, { kind: CauseKind; path: string }>> = {
  leveldb: {
    '1-unsynced-first-manifest': { kind: 'missing-fsync', path: '/MANIFEST-*' },
    '2-new-log-not-dir-synced': { kind: 'early-confirmation', path: '/' },
    '2b-new-log-not-dir-synced-records': { kind: 'early-confirmation', path: '/' },
    '3-manifest-record-before-table-name': { kind: 'missing-dir-fsync', path: '/*.ldb' },
  },
  nats: {
    '1-puback-not-fsynced': { kind: 'missing-fsync', path: `${STREAM}/msgs/*.blk` },
    '2-stream-meta-not-fsynced': { kind: 'missing-dir-fsync', path: `${STREAM}/msgs` },
    '3-consumer-ahead-of-stream': { kind: 'missing-fsync', path: `${STREAM}/msgs/*.blk` },
    '4-torn-last-record-keeps-seq': { kind: 'torn-write', path: `${STREAM}/msgs/*.blk` },
    '5-trusted-index-over-torn-record': { kind: 'torn-write', path: `${STREAM}/msgs/*.blk` },
    '6-interest-orphan-purge': { kind: 'early-persistence', path: `${STREAM}/obs/powercut-extra-*/o.dat` },
    '7-stream-seqs-restart': { kind: 'torn-write', path: `${STREAM}/msgs/*.blk` },
    '8-damaged-record-reads-as-missing': { kind: 'damaged-data-trusted', path: '**/*.blk' },
    '9-damaged-record-truncates-block': { kind: 'damaged-data-trusted', path: '**/*.blk' },
    '10-read-error-block-counts-empty': { kind: 'damaged-data-trusted', path: '**/*.blk' },
    '11-consumer-state-no-checksum': { kind: 'damaged-data-trusted', path: '**/o.dat' },
    '12-rejected-index-first-seq': { kind: 'damaged-data-trusted', path: '**/*.idx' },
  },
};

/** A cluster's findings (C1, C2) have their causes checked in nats-findings.test.ts: named on the run each artifact keeps, and their fix's images. */
const CLUSTER_FINDING = /^C\d+-/;
const findingsOf = async (target: string) => (await readdir(path.join(REPO_ROOT, 'docs', 'findings', target), { withFileTypes: true })).filter((d) => d.isDirectory() && !CLUSTER_FINDING.test(d.name)).map((d) => d.name).sort();

describe.each(Object.keys(EXPECTED))('the causes of the %s findings', (target) => {
  it('cover every finding folder', async () => {
    expect(await findingsOf(target)).toEqual(Object.keys(EXPECTED[target]).sort());
  });

  it.each(Object.entries(EXPECTED[target]))('%s: named from its artifact, consistent with its recording, quoted in the docs', async (finding, want) => {
    const dir = path.join(REPO_ROOT, 'docs', 'findings', target, finding);
    const a = await readArtifact(dir);
    const cause = a.cause;
    expect(cause, `${dir} has no cause.json (run powercut explain on it)`).toBeDefined();
    expect(cause!.kind).toBe(want.kind);
    expect(cause!.key.split(' ')).toContain(want.path);
    if (a.case.faults?.length || a.case.recoveryFaults?.length) {
      // Read off the case: the same again, from the artifact alone.
      expect(causeOfCase({ ...a, cause: undefined }).key).toBe(cause!.key);
    } else if (!cause!.evidence.some((e) => e.includes('no longer failed the same checks'))) {
      // Explained on the artifact's own state: the change it names is a request of its recording.
      if (cause!.unit && cause!.change) {
        const e = a.cuts[0].trace.find((x) => x.op === cause!.change!.op);
        expect(e, `request ${cause!.change.op} in ${dir}/trace-cut-0.json`).toBeDefined();
        expect(e!.kind).toBe(cause!.change.kind);
        const p = changedPath(cause!.unit, cause!.change);
        expect([e!.path, e!.path2]).toContain(cause!.unit.kind === 'file' && !cause!.unit.path.startsWith('/') ? e!.path : p);
      }
    }
    const doc = await readFile(path.join(REPO_ROOT, 'docs', `${target}.md`), 'utf8');
    expect(doc, `docs/${target}.md quotes the cause of ${finding}`).toContain(cause!.title);
  });
});
