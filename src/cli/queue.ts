import type { Command } from './usage.js';

export const help = 'powercut queue: not implemented yet';

export const run: Command = async () => {
  console.error(help);
  return 2;
};
