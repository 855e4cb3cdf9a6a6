#!/usr/bin/env node
// `powercut`: dispatches to one module per subcommand (src/cli/*.ts).
import { UsageError, type Command } from './cli/usage.js';

const commands: Record<string, { summary: string; load: () => Promise<{ run: Command }> }> = {
  mount: { summary: 'run the fs daemon in the foreground on MOUNTPOINT', load: () => import('./cli/mount.js') },
  ctl: { summary: 'send one control request to a running daemon', load: () => import('./cli/ctl.js') },
  queue: { summary: 'inspect or repair a queue directory', load: () => import('./cli/queue.js') },
  scenario: { summary: 'list or run named crash scenarios', load: () => import('./cli/scenario.js') },
  replay: { summary: 're-run a failure artifact exactly', load: () => import('./cli/replay.js') },
  gate: { summary: 'the durability gate: scenarios, then property suites for a time budget', load: () => import('./cli/gate.js') },
};

const topHelp = `usage: powercut <command> [options]

commands:
${Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`).join('\n')}

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
  const { run } = await command.load();
  return run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`powercut: ${err.message}`);
      process.exitCode = 2;
    } else {
      console.error(`powercut: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    }
  },
);
