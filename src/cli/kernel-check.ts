// `powercut kernel-check`: the journaled model checked against the real Linux kernel's ext4 (under
// QEMU): every crash state real ext4 shows for a drawn history must be a state of journaled.
import path from 'node:path';
import { DEFAULT_SUBSET_BOUND } from '../kernel-check/block-log.js';
import { kernelCheck, readSaved, replaySaved, type CheckSummary } from '../kernel-check/check.js';
import { KERNEL_CHECK_PACKAGES } from '../kernel-check/guest.js';
import { MAX_STEPS } from '../kernel-check/history.js';
import { DEFAULT_TEST_SEED, seedFromEnv } from '../../properties/seed.js';
import { parseCommandArgs, usageFail, type Command } from './usage.js';

export const KERNEL_CHECK_EXIT = { sound: 0, outside: 1, usage: 2, toolFailed: 3 } as const;
export const TOOL_FAILED_EXIT = KERNEL_CHECK_EXIT.toolFailed;

export const help = `usage: powercut kernel-check [--histories N] [--seed S] [--per-boot K] [--all-subsets-up-to W] [--out DIR]
       powercut kernel-check --replay FILE...
       powercut kernel-check --rerun FILE...

Checks the journaled crash model against real ext4: draws N small syscall histories (1-4 files in
up to 2 directories, up to ${MAX_STEPS} steps: create, write, append, overwrite, truncate, rename,
link, unlink, fsync, fdatasync, directory fsync, pauses) from the seed, runs each on a fresh ext4
under Debian's Linux kernel in QEMU (K histories per boot, one disk each) with every write and
flush logged, builds the crash states the log allows (everything before a flush, plus a subset of
the writes after it), reads each back with e2fsck and debugfs, and checks that every one is a state
of the journaled model after the steps that may have completed. A run samples ext4's behaviour (its
timing varies): it can show the model is missing states, never that it has them all.

A real state outside journaled is printed with its history and the nearest model states, and saved
in DIR as JSON; --replay judges saved states again, without a VM (after a model change), and
--rerun runs their histories on the kernel again (a history file holds {"history": [...]}).

Needs Debian packages: ${KERNEL_CHECK_PACKAGES.join(', ')} (npm install as root installs them), and
apt-get download for the kernel package (cached under $POWERCUT_CACHE or ~/.cache/powercut).

options:
  --histories N          histories to run (default 8)
  --seed S               the seed they are drawn from (default $POWERCUT_SEED or ${DEFAULT_TEST_SEED})
  --per-boot K           histories per boot (default 6)
  --all-subsets-up-to W  every subset of the writes after a flush when there are at most W, else
                         prefixes and all-but-one (default ${DEFAULT_SUBSET_BOUND.allSubsetsUpTo})
  --out DIR              where real states outside journaled are saved (default kernel-check-out)
  --replay FILE...       judge saved states again
  --rerun FILE...        run saved histories on the kernel again
  -h, --help             this text

exit status:
  ${KERNEL_CHECK_EXIT.sound}  every real state is a state of journaled
  ${KERNEL_CHECK_EXIT.outside}  a real state is outside journaled (a model bug)
  ${KERNEL_CHECK_EXIT.usage}  usage error
  ${KERNEL_CHECK_EXIT.toolFailed}  the check itself failed (a missing package, QEMU, e2fsck)`;

const count = (name: string, v: string | undefined, fallback: number, min: number): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) usageFail(`--${name} must be an integer >= ${min}, got ${v}`, help);
  return n;
};

export function summaryText(s: CheckSummary): string {
  const sum = (f: (r: CheckSummary['results'][number]) => number) => s.results.reduce((n, r) => n + f(r), 0);
  const n = s.results.length;
  const lines = [
    `kernel-check: ${n} histories on ${s.kernel} (${s.e2fsprogs}); boots with write-back expiry ${[...new Set(s.boots.map((b) => `${b.settings.dirtyExpireCs / 100} s`))].join(' and ')}`,
    `  block states:                       ${sum((r) => r.blockStates)}`,
    `  real states (distinct per history): ${sum((r) => r.realStates)}`,
    `  unreadable block states:            ${sum((r) => r.unreadable.length)}`,
    `  states e2fsck -fy fixed beyond free counts: ${sum((r) => r.repaired.length)} (compared all the same)`,
    `  model states (journaled, enumerated): ${sum((r) => r.modelStates)}, of which the kernel never showed ${sum((r) => r.neverShown)} (a sample of ext4's timing, not all of it)`,
    `  real states outside journaled:      ${sum((r) => r.outside.journaled)}`,
    `  for information, real states outside torn: ${sum((r) => r.outside.torn)}, outside lose-unsynced: ${sum((r) => r.outside['lose-unsynced'])} (expected: those models are stricter than ext4)`,
    `  seconds per history:                ${n ? (s.seconds / n).toFixed(1) : '-'} (${s.seconds.toFixed(0)} s in all)`,
  ];
  for (const r of s.results) for (const u of r.unreadable) lines.push(`  unreadable (history ${r.index + 1}): ${u}`);
  for (const r of s.results) for (const u of r.repaired.slice(0, 2)) lines.push(`  e2fsck fixed (history ${r.index + 1}): ${u}`);
  for (const r of s.results) for (const f of r.saved) lines.push(`  outside journaled: history ${r.index + 1}, saved ${f}`);
  return lines.join('\n');
}

export const run: Command = async (argv) => {
  const parsed = parseCommandArgs({
    args: argv, allowPositionals: true,
    options: {
      histories: { type: 'string' }, seed: { type: 'string' }, 'per-boot': { type: 'string' }, 'all-subsets-up-to': { type: 'string' },
      out: { type: 'string' }, replay: { type: 'boolean' }, rerun: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
  }, help);
  const v = parsed.values;
  if (v.help) {
    console.log(help);
    return 0;
  }
  if (v.replay) {
    if (parsed.positionals.length === 0) usageFail('--replay needs saved state files', help);
    let outside = 0;
    for (const f of parsed.positionals) {
      const r = await replaySaved(path.resolve(f));
      console.log(`${f}:\n${r.text}\n`);
      if (!r.member) outside++;
    }
    return outside > 0 ? KERNEL_CHECK_EXIT.outside : KERNEL_CHECK_EXIT.sound;
  }
  if (v.rerun && parsed.positionals.length === 0) usageFail('--rerun needs saved state or history files', help);
  if (!v.rerun && parsed.positionals.length > 0) usageFail(`unexpected argument ${parsed.positionals[0]}`, help);
  const given = v.rerun ? await Promise.all(parsed.positionals.map(async (f) => (await readSaved(path.resolve(f))).history)) : undefined;
  if (v.seed !== undefined && !/^-?\d+$/.test(v.seed)) usageFail(`--seed must be an integer, got ${v.seed}`, help);
  const summary = await kernelCheck({
    histories: count('histories', v.histories, 8, 1),
    seed: v.seed !== undefined ? Number(v.seed) : seedFromEnv().seed,
    perBoot: count('per-boot', v['per-boot'], 6, 1),
    bound: { allSubsetsUpTo: count('all-subsets-up-to', v['all-subsets-up-to'], DEFAULT_SUBSET_BOUND.allSubsetsUpTo, 0) },
    outDir: path.resolve(v.out ?? 'kernel-check-out'),
    log: (line) => console.log(line),
    given,
  });
  console.log(`\n${summaryText(summary)}`);
  return summary.results.some((r) => r.outside.journaled > 0) ? KERNEL_CHECK_EXIT.outside : KERNEL_CHECK_EXIT.sound;
};
