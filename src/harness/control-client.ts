// Client of the fs daemon's control socket: one JSON line per request, answers in order, every
// request bounded by a timeout.
import { connect, type Socket } from 'node:net';
import type {
  ControlAnswer, ControlRequest, CrashPoint, CrashPolicy, Fault, StartingStateSize, StatusAnswer, TraceEntry,
} from '../../fusefs/protocol.js';
import type { CrashStateId, Hypothesis, LostUnit, ProbeUnit, StatePolicy, Mark, StateCaps, StatesAnswer } from '../../fusefs/crash-states.js';
import type { FsyncHoldSchedule } from '../../fusefs/fsync-holds.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

const REPLAYS = 'the daemon replays the recorded run in memory (its cost grows with the requests recorded: a shorter workload records fewer)';
/**
 * Why a request the daemon works on can be slow, and what lowers that work, for its timeout's error
 * (a state's cost grows with what the run wrote, not with the bytes its files hold: content-digest.ts).
 */
const SLOW_BECAUSE: Partial<Record<ControlRequest['cmd'], string>> = {
  states: `${REPLAYS}, then builds and hashes every state it lists (the gate's --max-states, --max-states-per-interval and --sector-patterns cap how many)`,
  'state-image': `${REPLAYS} up to the state, then writes the image of every file the state holds (its written bytes; holes stay holes)`,
  'load-state': `${REPLAYS} up to the state, then mounts it`,
  units: `${REPLAYS} up to the state, then compares what it lost file by file`,
  'save-recording': 'the daemon writes every call of the recorded run with its data, gzipped (its size grows with what the run wrote)',
  'load-recording': 'the daemon reads a saved run with its data (its size grows with what the run wrote)',
};
export const CRASH_TIMEOUT_MS = 30_000;

/** An {"ok":false} answer, or a transport failure, naming the request. */
export class ControlError extends Error {}

interface Pending {
  resolve: (a: ControlAnswer) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class ControlClient {
  private buffered = '';
  private pending: Pending[] = [];
  private closedError: Error | null = null;

  private constructor(private readonly sock: Socket, readonly socketPath: string) {
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => this.onData(chunk));
    sock.on('error', (e) => this.failAll(new ControlError(`control socket ${socketPath}: ${e.message}`)));
    sock.on('close', () => this.failAll(new ControlError(`control socket ${socketPath} closed`)));
  }

  static connect(socketPath: string, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      const sock = connect(socketPath);
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new ControlError(`cannot connect to control socket ${socketPath} within ${timeoutMs} ms`));
      }, timeoutMs);
      sock.once('connect', () => {
        clearTimeout(timer);
        resolve(new ControlClient(sock, socketPath));
      });
      sock.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new ControlError(`cannot connect to control socket ${socketPath}: ${e.code ?? e.message}`));
      });
    });
  }

  /** Sends one request; resolves with the answer whether ok or not. */
  request(req: ControlRequest, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ControlAnswer> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        timer: setTimeout(() => {
          // Answers come in order: after a timeout the stream can no longer be matched, so close it.
          const why = SLOW_BECAUSE[req.cmd];
          this.failAll(new ControlError(`control request '${req.cmd}' got no answer within ${timeoutMs} ms${why ? `: ${why}` : ''}`));
          this.sock.destroy();
        }, timeoutMs),
      };
      this.pending.push(entry);
      this.sock.write(JSON.stringify(req) + '\n');
    });
  }

  async status(): Promise<StatusAnswer> {
    return (await this.ok({ cmd: 'status' })) as unknown as StatusAnswer;
  }
  async arm(p: CrashPoint): Promise<void> {
    await this.ok({ cmd: 'arm', ...p });
  }
  async disarm(): Promise<void> {
    await this.ok({ cmd: 'disarm' });
  }
  /** Thaws a freeze without a power cut (every node's held requests run on); `arm` is armed in the same step. */
  async release(arm?: CrashPoint): Promise<void> {
    await this.ok(arm ? { cmd: 'release', arm } : { cmd: 'release' });
  }
  async waitFrozen(timeoutMs: number): Promise<{ frozen: boolean; frozenAt?: number }> {
    const a = await this.ok({ cmd: 'wait-frozen', timeoutMs }, timeoutMs + DEFAULT_REQUEST_TIMEOUT_MS);
    return a.frozen ? { frozen: true, frozenAt: a.frozenAt as number } : { frozen: false };
  }
  /**
   * The power cut (of a cluster's `nodes` only, if given: the others' held requests run on); answers
   * how long the remount took and, under torn, how many writes were kept in part.
   */
  async crash(policy?: CrashPolicy, seed?: number, nodes?: number[]): Promise<{ remountMs?: number; tornPartialWrites?: number }> {
    const req: ControlRequest = { cmd: 'crash' };
    if (policy !== undefined) req.policy = policy;
    if (seed !== undefined) req.seed = seed;
    if (nodes !== undefined) req.nodes = nodes;
    return (await this.ok(req, CRASH_TIMEOUT_MS)) as { remountMs?: number; tornPartialWrites?: number };
  }
  async trace(): Promise<TraceEntry[]> {
    return (await this.ok({ cmd: 'trace' })).trace as TraceEntry[];
  }
  /** Every node's image (a cluster's under out/node<k>), or only `node`'s at out; `start`: the starting state. */
  async image(out: string, state?: 'durable' | 'live' | 'start', node?: number): Promise<void> {
    await this.ok({ cmd: 'image', out, ...(state ? { state } : {}), ...(node !== undefined ? { node } : {}) }, CRASH_TIMEOUT_MS);
  }
  /** A fault on every node, or on a cluster's `node` only. */
  async fault(f: Fault, node?: number): Promise<void> {
    await this.ok({ cmd: 'fault', ...f, ...(node !== undefined ? { node } : {}) });
  }
  async clearFaults(): Promise<void> {
    await this.ok({ cmd: 'clear-faults' });
  }
  /** The starting state (empty, or the one starting-state set); `record` records the run that follows, `fsyncHolds` makes its fsyncs slow on that schedule. */
  async reset(record = false, fsyncHolds?: FsyncHoldSchedule): Promise<void> {
    await this.ok({ cmd: 'reset', ...(record ? { record } : {}), ...(fsyncHolds ? { fsyncHolds } : {}) }, CRASH_TIMEOUT_MS);
  }
  /**
   * Every later reset starts from this starting state (all of it durable, outside every recorded
   * run): the live filesystem now, or the image folder `from`; `clear`: empty again. Each node's size.
   */
  async startingState(how: { from?: string; clear?: boolean } = {}): Promise<StartingStateSize[]> {
    return (await this.ok({ cmd: 'starting-state', ...how }, CRASH_TIMEOUT_MS)).nodes as StartingStateSize[];
  }
  /** The trace and the confirmation markers the driver left in it. */
  async traceWithMarks(): Promise<{ trace: TraceEntry[]; marks: Mark[] }> {
    const a = await this.ok({ cmd: 'trace' });
    return { trace: a.trace as TraceEntry[], marks: (a.marks as Mark[] | undefined) ?? [] };
  }
  /** The distinct crash states of the recorded run (since the last `reset` with record), under the policies, within the caps. */
  async states(policies: StatePolicy[], caps: StateCaps, hypothesis?: Hypothesis, onlyIntervals?: readonly number[]): Promise<StatesAnswer> {
    return (await this.ok({ cmd: 'states', policies, ...caps, ...(hypothesis ? { hypothesis } : {}), ...(onlyIntervals ? { onlyIntervals: [...onlyIntervals] } : {}) }, CRASH_TIMEOUT_MS)) as unknown as StatesAnswer;
  }
  /**
   * Writes the image crash state `id` leaves under `out` (outside the mount; `replace`: emptied
   * first); the mount is not touched. `probe`: with those lost units made durable too; `hypothesis`:
   * the state of the run with those fsyncs inserted.
   */
  async stateImage(id: CrashStateId, out: string, replace = false, extra: { probe?: ProbeUnit[]; hypothesis?: Hypothesis } = {}): Promise<void> {
    await this.ok({ cmd: 'state-image', state: id, out, ...(replace ? { replace } : {}), ...extra }, CRASH_TIMEOUT_MS);
  }
  /** Mounts the crash state `id` of the recorded run (or of a hypothesis about it), ready for recovery (nothing held, fresh trace). */
  async loadState(id: CrashStateId, extra: { probe?: ProbeUnit[]; hypothesis?: Hypothesis } = {}): Promise<void> {
    await this.ok({ cmd: 'load-state', state: id, ...extra }, CRASH_TIMEOUT_MS);
  }
  /** Writes the recorded run to the file `out` (outside the mount): every node's calls with their data, for loadRecording later. */
  async saveRecording(out: string): Promise<void> {
    await this.ok({ cmd: 'save-recording', out }, CRASH_TIMEOUT_MS);
  }
  /** Makes the run a saveRecording wrote the recorded run: its states listed, imaged and probed as after the run itself. */
  async loadRecording(from: string): Promise<void> {
    await this.ok({ cmd: 'load-recording', from }, CRASH_TIMEOUT_MS);
  }
  /** What crash state `id` lost, unit by unit. */
  async units(id: CrashStateId, hypothesis?: Hypothesis): Promise<LostUnit[]> {
    return (await this.ok({ cmd: 'units', state: id, ...(hypothesis ? { hypothesis } : {}) }, CRASH_TIMEOUT_MS)).units as LostUnit[];
  }
  async shutdown(): Promise<void> {
    await this.ok({ cmd: 'shutdown' }, CRASH_TIMEOUT_MS);
  }

  close(): void {
    this.closedError ??= new ControlError(`control client for ${this.socketPath} is closed`);
    this.sock.destroy();
  }

  private async ok(req: ControlRequest, timeoutMs?: number): Promise<Record<string, unknown>> {
    const a = await this.request(req, timeoutMs);
    if (!a.ok) throw new ControlError(`control request '${req.cmd}' failed: ${a.error}`);
    return a;
  }

  private onData(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const p = this.pending.shift();
      if (!p) continue; // an answer nobody waits for (after a timeout): nothing to match it to
      clearTimeout(p.timer);
      try {
        p.resolve(JSON.parse(line) as ControlAnswer);
      } catch {
        p.reject(new ControlError(`control socket ${this.socketPath} sent a line that is not JSON: ${line.slice(0, 200)}`));
      }
    }
  }

  private failAll(e: Error): void {
    this.closedError ??= e;
    const pending = this.pending;
    this.pending = [];
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(e);
    }
  }
}
