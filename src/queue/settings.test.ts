import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, validateSettings } from './settings.js';
import { SettingsError } from './errors.js';

describe('settings', () => {
  it("defaults are Logstash's", () => {
    expect(validateSettings()).toEqual({
      pageCapacityBytes: 64 * 1024 * 1024,
      maxBytes: 1024 * 1024 * 1024,
      maxEvents: 0,
      checkpointWrites: 1024,
      checkpointAcks: 1024,
      checkpointDesign: 'atomic-file',
      pageWriteDesign: 'sync',
      writeTimeoutMs: 0,
    });
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
  });

  it.each([
    [{ pageCapacityBytes: 10 }, /pageCapacityBytes = 10 is invalid: allowed is an integer from 41 to 4294967295/],
    [{ checkpointAcks: 0 }, /checkpointAcks = 0 is invalid: allowed is an integer from 1/],
    [{ checkpointWrites: 1.5 }, /checkpointWrites = 1.5 is invalid/],
    [{ maxEvents: -1 }, /maxEvents = -1 is invalid/],
    [{ maxBytes: 1000, pageCapacityBytes: 4096 }, /maxBytes = 1000 is invalid: it must be at least pageCapacityBytes \(4096\)/],
    [{ checkpointDesign: 'wal' as never }, /checkpointDesign = "wal" is invalid: allowed is 'atomic-file' or 'append-log'/],
    [{ pageWriteDesign: 'async' as never }, /pageWriteDesign = "async" is invalid/],
    [{ writeTimeoutMs: '5' as never }, /writeTimeoutMs = "5" is invalid/],
    [{ pageSize: 5 } as never, /unknown queue setting 'pageSize'/],
  ])('%j is rejected with a message naming the setting and range', (partial, message) => {
    expect(() => validateSettings(partial)).toThrow(SettingsError);
    expect(() => validateSettings(partial)).toThrow(message);
  });
});
