// The ordered list of mutating requests since mount (or reset), with arguments and results.
import type { MutatingKind, TraceEntry } from './protocol.js';

export type TraceArgs = Omit<TraceEntry, 'op' | 'kind' | 'result' | 'state'>;

export class Trace {
  private entries: TraceEntry[] = [];

  get length(): number {
    return this.entries.length;
  }

  /** Appends a request and returns its entry (op numbers start at 1). */
  add(kind: MutatingKind, args: TraceArgs): TraceEntry {
    const entry: TraceEntry = { op: this.entries.length + 1, kind, ...args, state: 'held' };
    this.entries.push(entry);
    return entry;
  }

  all(): readonly TraceEntry[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
  }
}
