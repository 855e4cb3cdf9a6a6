// The daemon's state machine: one model, one gate, faults, and the current mount; implements every
// control command. Control input is validated before it gets here.
import { resolve, relative, isAbsolute } from 'node:path';
import { FsModel } from './model/fs-model.js';
import { RequestGate } from './request-gate.js';
import { Faults } from './faults.js';
import { mountGeneration, unmountGeneration, type Mounted } from './mount-generation.js';
import type { FsState } from './fuse-adapter.js';
import type { ControlAnswer, ControlRequest, StatusAnswer } from './protocol.js';
import { writeTree } from './image-files.js';

export class PowercutDaemon {
  private state: FsState;
  private mounted: Mounted | null = null;
  private crashes = 0;
  /** Serialises crash/reset/shutdown so two remounts never overlap. */
  private lifecycle: Promise<unknown> = Promise.resolve();
  onShutdown: () => void = () => {};

  constructor(readonly mountpoint: string, model = new FsModel()) {
    this.state = { model, gate: new RequestGate(), faults: new Faults(), handles: new Map(), nextFd: 1, generation: 0 };
  }

  async mount(): Promise<void> {
    this.mounted = await mountGeneration(this.mountpoint, this.state);
  }

  async unmount(): Promise<void> {
    const m = this.mounted;
    this.mounted = null;
    if (m) await unmountGeneration(m, this.state);
    this.state.gate.disposeHeld();
  }

  async handle(req: ControlRequest): Promise<ControlAnswer> {
    const { gate, faults } = this.state;
    switch (req.cmd) {
      case 'status': {
        const a: StatusAnswer = {
          ok: true, mountpoint: this.mountpoint, opCount: gate.opCount, armed: gate.armed,
          frozen: gate.frozenAt !== null, frozenAt: gate.frozenAt, faults: faults.list(), crashes: this.crashes,
        };
        return a as unknown as ControlAnswer;
      }
      case 'arm': {
        const { cmd: _cmd, ...point } = req;
        gate.arm(point);
        return { ok: true };
      }
      case 'disarm':
        gate.disarm();
        return { ok: true };
      case 'wait-frozen': {
        const at = await gate.waitFrozen(req.timeoutMs);
        return at === null ? { ok: true, frozen: false } : { ok: true, frozen: true, frozenAt: at };
      }
      case 'crash':
        return this.serial(() => this.crash(req.policy ?? 'lose-unsynced', req.seed ?? 0));
      case 'trace':
        return { ok: true, trace: gate.trace.all() };
      case 'image':
        await this.image(req.out, req.state ?? 'durable');
        return { ok: true, out: resolve(req.out) };
      case 'fault': {
        const { cmd: _cmd, ...fault } = req;
        faults.add(fault);
        return { ok: true };
      }
      case 'clear-faults':
        faults.clear();
        return { ok: true };
      case 'reset':
        return this.serial(() => this.reset());
      case 'shutdown':
        return this.serial(async () => {
          await this.unmount();
          setImmediate(() => this.onShutdown());
          return { ok: true };
        });
    }
  }

  private async crash(policy: 'lose-unsynced' | 'torn' | 'keep-all', seed: number): Promise<ControlAnswer> {
    const t0 = performance.now();
    // Detach first so nothing held can be answered to a live process, then dispose of the held requests.
    await this.unmount();
    this.state.model.crash(policy, seed);
    this.state.handles.clear();
    this.state.gate.restart();
    this.crashes++;
    await this.mount();
    return { ok: true, policy, seed, remountMs: Math.round(performance.now() - t0) };
  }

  private async reset(): Promise<ControlAnswer> {
    // Frozen, the held requests belong to processes that may still run: detach first (as crash does)
    // so they, and anything else they do on the old mount, get errors instead of the new filesystem.
    const remount = this.state.gate.frozenAt !== null || this.state.gate.heldCount > 0;
    if (remount) await this.unmount();
    this.state.model = new FsModel();
    this.state.handles.clear();
    this.state.faults.clear();
    this.state.gate.restart();
    if (remount) await this.mount();
    return { ok: true };
  }

  private async image(out: string, which: 'durable' | 'live'): Promise<void> {
    const abs = resolve(out);
    const rel = relative(resolve(this.mountpoint), abs);
    // The daemon must never do file I/O on its own mount: it would be serving itself.
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw new Error(`image: out ${abs} is inside the mount ${this.mountpoint}; choose a directory outside it`);
    await writeTree(this.state.model.exportTree(which), abs);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(fn, fn);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }
}
