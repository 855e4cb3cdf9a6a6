// `powercut queue inspect|repair DIR`: look at a queue directory, or make a damaged one open again.
import { stat } from 'node:fs/promises';
import { parseCommandArgs, usageFail, type Command } from './usage.js';
import { inspectQueue, repairQueue } from '../targets/powercut-queue/maintenance.js';

export const help = `usage: powercut queue inspect DIR [--json]
       powercut queue repair DIR [--json]

  inspect   print the checkpoint, the lock holder and every page (seqs, valid bytes, torn tail); read-only
  repair    keep every intact record, drop damaged ones and print what was dropped (file, offset, seqs);
            rewrites the checkpoint so the queue opens. Close the queue first (repair takes its lock).

options:
  --json    print one JSON object instead of text
  -h, --help`;

export const run: Command = async (argv) => {
  const parsed = parseCommandArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }, help);
  if (parsed.values.help) {
    console.log(help);
    return 0;
  }
  const [action, dir, ...extra] = parsed.positionals;
  if (action !== 'inspect' && action !== 'repair') usageFail(action === undefined ? 'missing action (inspect or repair)' : `unknown action '${action}'`, help);
  if (dir === undefined) usageFail(`queue ${action}: missing DIR`, help);
  if (extra.length > 0) usageFail(`queue ${action}: unexpected argument '${extra[0]}'`, help);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`queue ${action}: ${dir} is not a directory`);

  if (action === 'inspect') {
    const report = await inspectQueue(dir);
    if (parsed.values.json) {
      console.log(JSON.stringify(report));
      return 0;
    }
    console.log(`queue ${report.dir}`);
    console.log(`  lock: ${report.lockHolderPid ? `held by pid ${report.lockHolderPid} (or left by it)` : 'none'}`);
    console.log(`  checkpoint (${report.checkpointDesign ?? 'none'}): ${JSON.stringify(report.checkpoint ?? null)}`);
    if (report.gaps) console.log(`  seq gaps dropped by repair: ${report.gaps}`);
    for (const p of report.pages) {
      const header = 'error' in p.header ? `BAD HEADER: ${p.header.error}` : `page ${p.header.pageNum}, first seq ${p.header.firstSeq}`;
      console.log(`  ${p.file}: ${p.sizeBytes} bytes, ${header}, ${p.records} records (seqs ${p.seqs}), valid to ${p.validBytes}${p.tail ? `, stops: ${p.tail}` : ''}`);
    }
    return 0;
  }

  const report = await repairQueue(dir);
  if (parsed.values.json) {
    console.log(JSON.stringify(report));
    return 0;
  }
  if (report.dropped.length === 0) console.log(`queue ${dir}: nothing damaged, nothing dropped`);
  for (const d of report.dropped) console.log(`dropped ${d.file} at offset ${d.offsetBytes} (${d.bytes} bytes, seqs ${d.seqs}): ${d.reason}`);
  console.log(`checkpoint ${report.checkpointRebuilt ? 'rewritten' : 'unchanged'}: ${JSON.stringify(report.checkpoint)}`);
  return 0;
};
