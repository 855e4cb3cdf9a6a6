// The ordered list of mutating requests since mount (or reset), with arguments and results.
// Bounded: past MAX_TRACE_ENTRIES requests are still numbered but no longer stored.
import type { TraceEntry } from './protocol.js';

/** Requests a trace stores (about 200 bytes each): a bound on the daemon's memory for long runs. */
export const MAX_TRACE_ENTRIES = 1_000_000;

export class Trace {
  private entries: TraceEntry[] = [];
  private count = 0;

  constructor(private readonly maxEntries = MAX_TRACE_ENTRIES) {}

  /** Requests numbered so far (stored or not). */
  get length(): number {
    return this.count;
  }

  /** True once requests went unstored: crash points counted by kind or path can no longer be armed. */
  get truncated(): boolean {
    return this.count > this.entries.length;
  }

  /**
   * Numbers a request (op numbers start at 1) and stores its entry while there is room. The caller
   * builds the entry (one object per request, nothing copied here) and fills in result and state.
   */
  add(entry: TraceEntry): TraceEntry {
    entry.op = ++this.count;
    if (this.entries.length < this.maxEntries) this.entries.push(entry);
    return entry;
  }

  all(): readonly TraceEntry[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
    this.count = 0;
  }
}
