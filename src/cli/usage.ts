// Shared by every subcommand: a usage error exits 2 with a message, an error answer exits 1.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export type Command = (argv: string[]) => Promise<number>;

/** Throws a UsageError carrying the command's help, so every subcommand reports misuse the same way. */
export function usageFail(message: string, help: string): never {
  throw new UsageError(`${message}\n\n${help}`);
}

/** `parseArgs`, with an unknown or malformed option turned into a usage error (exit 2). */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, help: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    usageFail(err instanceof Error ? err.message : String(err), help);
  }
}

/** --settings: a JSON object, or a usage error naming what is wrong. */
export function parseSettingsOption(text: string | undefined, helpText: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    usageFail(`--settings is not valid JSON (${(err as Error).message}): ${text}`, helpText);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) usageFail(`--settings must be a JSON object, got ${text}`, helpText);
  return value as Record<string, unknown>;
}
