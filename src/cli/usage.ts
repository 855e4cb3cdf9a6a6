// Shared by every subcommand: a usage error exits 2 with a message, an error answer exits 1.
export class UsageError extends Error {}

export type Command = (argv: string[]) => Promise<number>;

/** Wraps parseArgs-style failures so every subcommand reports them the same way. */
export function usageFail(message: string, help: string): never {
  throw new UsageError(`${message}\n\n${help}`);
}
