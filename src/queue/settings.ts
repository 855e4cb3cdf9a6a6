// Settings with Logstash's defaults, and their validation (pure).
import type { QueueSettings } from './types.js';
import { SettingsError } from './errors.js';
import { PAGE_HEADER_BYTES, RECORD_OVERHEAD_BYTES } from './format.js';

const MiB = 1024 * 1024;

export const DEFAULT_SETTINGS: Readonly<QueueSettings> = Object.freeze({
  pageCapacityBytes: 64 * MiB,
  maxBytes: 1024 * MiB,
  maxEvents: 0,
  checkpointWrites: 1024,
  checkpointAcks: 1024,
  checkpointDesign: 'atomic-file',
  pageWriteDesign: 'sync',
  writeTimeoutMs: 0,
});

/** Smallest page that holds a header and one 1-byte event. */
export const MIN_PAGE_CAPACITY_BYTES = PAGE_HEADER_BYTES + RECORD_OVERHEAD_BYTES + 1;
// Page offsets are u32-safe and records carry a u32 length.
export const MAX_PAGE_CAPACITY_BYTES = 2 ** 32 - 1;

type IntRange = { min: number; max: number; note: string };
const intRanges: Record<Exclude<keyof QueueSettings, 'checkpointDesign' | 'pageWriteDesign'>, IntRange> = {
  pageCapacityBytes: { min: MIN_PAGE_CAPACITY_BYTES, max: MAX_PAGE_CAPACITY_BYTES, note: '' },
  maxBytes: { min: MIN_PAGE_CAPACITY_BYTES, max: Number.MAX_SAFE_INTEGER, note: ' and at least pageCapacityBytes' },
  maxEvents: { min: 0, max: Number.MAX_SAFE_INTEGER, note: ' (0 = unlimited)' },
  checkpointWrites: { min: 0, max: Number.MAX_SAFE_INTEGER, note: ' (0 = never checkpoint on write count)' },
  checkpointAcks: { min: 1, max: Number.MAX_SAFE_INTEGER, note: '' },
  writeTimeoutMs: { min: 0, max: 2 ** 31 - 1, note: ' (0 = wait forever)' },
};
const enums = {
  checkpointDesign: ['atomic-file', 'append-log'],
  pageWriteDesign: ['sync', 'buffered'],
} as const;

/** Fills defaults and checks every setting; throws SettingsError naming the setting and its allowed range. */
export function validateSettings(partial: Partial<QueueSettings> = {}): QueueSettings {
  for (const key of Object.keys(partial)) {
    if (!(key in DEFAULT_SETTINGS)) {
      throw new SettingsError(`unknown queue setting '${key}'; known settings: ${Object.keys(DEFAULT_SETTINGS).join(', ')}`);
    }
  }
  const settings: QueueSettings = { ...DEFAULT_SETTINGS };
  for (const [key, value] of Object.entries(partial)) {
    if (value !== undefined) (settings as unknown as Record<string, unknown>)[key] = value;
  }
  for (const [key, range] of Object.entries(intRanges)) {
    const value = (settings as unknown as Record<string, unknown>)[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
      throw new SettingsError(
        `queue setting ${key} = ${JSON.stringify(value)} is invalid: allowed is an integer from ${range.min} to ${range.max}${range.note}`,
      );
    }
  }
  for (const [key, allowed] of Object.entries(enums)) {
    const value = (settings as unknown as Record<string, unknown>)[key];
    if (!(allowed as readonly unknown[]).includes(value)) {
      throw new SettingsError(`queue setting ${key} = ${JSON.stringify(value)} is invalid: allowed is ${allowed.map((a) => `'${a}'`).join(' or ')}`);
    }
  }
  if (settings.maxBytes < settings.pageCapacityBytes) {
    throw new SettingsError(
      `queue setting maxBytes = ${settings.maxBytes} is invalid: it must be at least pageCapacityBytes (${settings.pageCapacityBytes})`,
    );
  }
  return settings;
}
