// The gate's progress: on a terminal one live line redrawn in place; otherwise a plain line at an
// interval (CI logs). Result lines are printed above the live line.
import { formatClock } from './budget.js';

export interface ProgressState {
  /** What runs now, e.g. "scenario torn-checkpoint-write". */
  phase: string;
  /** Crash cases judged so far, and what they are ('crash states' or 'power cuts'). */
  cases: number;
  unit: string;
  violations: number;
  /** Time left under a time budget (Infinity under a work budget: `work` says how far it got). */
  leftMs: number;
  /** Under a work budget: inputs (a cluster: workloads) started, of how many. */
  work?: { started: number; of: number; unit: string };
}

export function formatProgress(s: ProgressState): string {
  const left = s.work ? `${s.work.unit} ${s.work.started} of ${s.work.of}` : `${formatClock(s.leftMs)} left`;
  return `powercut gate: ${s.cases} ${s.unit} checked, ${s.violations} violation${s.violations === 1 ? '' : 's'}, ${left}  [${s.phase}]`;
}

export interface ProgressOutput {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export const TTY_REDRAW_MS = 250;
export const PLAIN_INTERVAL_MS = 15_000;

export class ProgressReporter {
  private timer: NodeJS.Timeout | undefined;
  private drawn = false;
  constructor(
    private readonly out: ProgressOutput,
    private readonly state: () => ProgressState,
    private readonly plainIntervalMs = PLAIN_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    const tick = () => (this.out.isTTY ? this.redraw() : this.out.write(formatProgress(this.state()) + '\n'));
    this.timer = setInterval(tick, this.out.isTTY ? TTY_REDRAW_MS : this.plainIntervalMs);
    this.timer.unref();
    if (this.out.isTTY) this.redraw();
  }

  /** Prints a line (a scenario's result) without garbling the live line. */
  log(line: string): void {
    this.clear();
    this.out.write(line + '\n');
    if (this.timer && this.out.isTTY) this.redraw();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private redraw(): void {
    const width = Math.max(20, (this.out.columns ?? 100) - 1);
    this.out.write(`\r\x1b[K${formatProgress(this.state()).slice(0, width)}`);
    this.drawn = true;
  }

  private clear(): void {
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }
}
