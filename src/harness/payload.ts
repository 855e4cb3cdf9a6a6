// Event payloads: a deterministic function of (event id, size), so the oracle can check the exact
// bytes of anything delivered without the driver printing the data itself.
import { crc32 } from 'node:zlib';

/** Bytes 0..3: event id (u32 LE), 4..7: size (u32 LE); the rest is a per-id byte pattern. */
export const PAYLOAD_HEADER_BYTES = 8;
export const MAX_EVENT_ID = 0xffff_ffff;

export function payload(eventId: number, sizeBytes: number): Buffer {
  if (!Number.isInteger(eventId) || eventId < 1 || eventId > MAX_EVENT_ID) {
    throw new Error(`payload: event id must be an integer in 1..${MAX_EVENT_ID}, got ${eventId}`);
  }
  if (!Number.isInteger(sizeBytes) || sizeBytes < PAYLOAD_HEADER_BYTES) {
    throw new Error(`payload: size must be an integer >= ${PAYLOAD_HEADER_BYTES} bytes, got ${sizeBytes}`);
  }
  const data = Buffer.allocUnsafe(sizeBytes);
  data.writeUInt32LE(eventId, 0);
  data.writeUInt32LE(sizeBytes, 4);
  // Never zero, and different per id, so a zeroed or swapped tail is visible.
  for (let i = PAYLOAD_HEADER_BYTES; i < sizeBytes; i++) data[i] = ((eventId * 131 + i * 7) % 255) + 1;
  return data;
}

export function payloadCrc(eventId: number, sizeBytes: number): number {
  return crc32(payload(eventId, sizeBytes));
}

/** What a delivered event's bytes say about itself; id is null when the header is unreadable. */
export interface PayloadSummary {
  id: number | null;
  sizeBytes: number;
  crc: number;
}

export function summarizePayload(data: Buffer): PayloadSummary {
  const id = data.length >= PAYLOAD_HEADER_BYTES ? data.readUInt32LE(0) : null;
  return { id: id === 0 ? null : id, sizeBytes: data.length, crc: crc32(data) };
}
