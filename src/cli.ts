#!/usr/bin/env node
// `powercut`: dispatches to one module per subcommand (src/cli/*.ts).
import { UsageError, type Command } from './cli/usage.js';

/**
 * A command module. An error it throws (other than a usage error) is the tool failing, and exits
 * with its TOOL_FAILED_EXIT where 1 means a verdict (a violation, a reproduced failure); else 1.
 */
interface CommandModule {
  run: Command;
  TOOL_FAILED_EXIT?: number;
}

const commands: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  mount: { summary: 'run the fs daemon in the foreground on MOUNTPOINT', load: () => import('./cli/mount.js') },
  ctl: { summary: 'send one control request to a running daemon', load: () => import('./cli/ctl.js') },
  queue: { summary: 'inspect or repair a queue directory', load: () => import('./cli/queue.js') },
  scenario: { summary: 'list or run named crash scenarios', load: () => import('./cli/scenario.js') },
  replay: { summary: 're-run a failure artifact exactly', load: () => import('./cli/replay.js') },
  explain: { summary: 'say why a failure artifact failed: the missed step, its fix, proof and reach', load: () => import('./cli/explain.js') },
  driver: { summary: 'check that a driver for your own queue follows the driver protocol', load: () => import('./cli/driver.js') },
  gate: { summary: 'the durability gate: scenarios, then property suites for a time budget', load: () => import('./cli/gate.js') },
  'kernel-check': { summary: 'check the journaled crash model against real ext4 under QEMU', load: () => import('./cli/kernel-check.js') },
  merge: { summary: "join the --json results of a gate sharded over CI jobs into one", load: () => import('./cli/merge.js') },
};

const topHelp = `usage: powercut <command> [options]

commands:
${Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`).join('\n')}

Run 'powercut <command> --help' for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(topHelp);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`powercut: unknown command '${name}'\n\n${topHelp}`);
    return 2;
  }
  const module = await command.load();
  try {
    return await module.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`powercut: ${err.message}`);
      return 2;
    }
    console.error(`powercut ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return module.TOOL_FAILED_EXIT ?? 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`powercut: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
