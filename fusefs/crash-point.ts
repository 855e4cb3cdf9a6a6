// Which mutating request is the crash point: the Nth overall, or the Nth matching a kind, a path
// glob and/or a node. Pure: the daemon feeds it every request in order.
import picomatch from 'picomatch';
import type { CrashPoint, MutatingKind } from './protocol.js';

export interface RequestInfo {
  kind: MutatingKind;
  path: string;
  path2?: string;
  /** A cluster's node (trace entries name it only when the daemon serves several). */
  node?: number;
}

export type PathMatcher = (path: string) => boolean;

/** A glob that matches absolute paths written with or without the leading slash. */
export function pathMatcher(glob: string): PathMatcher {
  const isMatch = picomatch(glob.replace(/^\/+/, ''), { dot: true });
  return (path) => isMatch(path.replace(/^\/+/, ''));
}

export class CrashPointMatcher {
  private readonly matchesPath: PathMatcher | null;
  private seen = 0;

  /** `history`: the requests already answered since mount, so N counts from mount, not from arming. */
  constructor(readonly point: CrashPoint, history: Iterable<RequestInfo>) {
    if (!Number.isSafeInteger(point.atOp) || point.atOp < 1) throw new Error(`crash point: atOp must be an integer >= 1, got ${point.atOp}`);
    this.matchesPath = point.path === undefined ? null : pathMatcher(point.path);
    for (const r of history) if (this.filters(r)) this.seen++;
    if (this.seen >= point.atOp) {
      throw new Error(`crash point already passed: ${this.seen} matching requests since mount, atOp is ${point.atOp}`);
    }
  }

  /** Feeds one request in order; true exactly when it is the crash point. */
  offer(r: RequestInfo): boolean {
    if (!this.filters(r)) return false;
    this.seen++;
    return this.seen === this.point.atOp;
  }

  /**
   * How many more requests of `kind` in a row surely are not the crash point, whatever their path
   * and node (Infinity if the point names another kind): what the binding may answer by itself (write-behind.ts).
   */
  requestsBefore(kind: MutatingKind): number {
    if (this.point.kind !== undefined && this.point.kind !== kind) return Infinity;
    return this.point.atOp - this.seen - 1;
  }

  private filters(r: RequestInfo): boolean {
    if (this.point.node !== undefined && (r.node ?? 0) !== this.point.node) return false;
    if (this.point.kind !== undefined && r.kind !== this.point.kind) return false;
    if (this.matchesPath && !this.matchesPath(r.path) && !(r.path2 !== undefined && this.matchesPath(r.path2))) return false;
    return true;
  }
}
