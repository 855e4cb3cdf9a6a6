// Replacing a mounted generation when detaching the old one fails: the daemon runs in this process
// (its requests are served by this event loop, so the workload runs in a child process). The swap
// (umount2 and move_mount in the daemon's process) needs root and the patched binding: without
// them the test fails saying so, since a daemon that lost either one falls back without an error.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { PowercutDaemon } from './powercut-daemon.js';
import { requirePatchedBinding, requireRoot } from './testing.js';

const mountsAt = (mnt: string) => readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.split(' ')[1] === mnt).length;

describe('replacing a generation', () => {
  it('a failed detach of the old generation still answers the held requests, and unmount takes both generations down', async () => {
    requireRoot('replacing a generation by a move beneath it');
    requirePatchedBinding('replacing a generation by a move beneath it');
    const work = mkdtempSync(join(tmpdir(), 'powercut-swap-'));
    const mnt = join(work, 'mnt');
    const daemon = new PowercutDaemon(mnt);
    await daemon.mount();
    try {
      await daemon.handle({ cmd: 'arm', atOp: 1, timing: 'before' });
      const writer = execa(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(join(mnt, 'f'))}, 'x')`], { reject: false, timeout: 20_000 });
      expect(await daemon.handle({ cmd: 'wait-frozen', timeoutMs: 10_000 })).toMatchObject({ frozen: true });
      const old = (daemon as unknown as { nodes: { mounted: { fuse: { detachNow(): number } } }[] }).nodes[0].mounted.fuse;
      const detachNow = old.detachNow;
      old.detachNow = () => -16; // EBUSY, once
      await expect(daemon.handle({ cmd: 'crash' })).rejects.toThrow(/detaching the old generation failed \(umount2: errno 16\)/);
      old.detachNow = detachNow;
      const w = await writer;
      expect(w.timedOut).toBe(false);
      expect(w.stderr).toMatch(/EIO/); // the held create was answered
      expect(mountsAt(mnt)).toBe(2); // the old generation on top of the new one
      await daemon.unmount();
      expect(mountsAt(mnt)).toBe(0);
    } finally {
      await daemon.unmount().catch(() => undefined);
      for (let i = 0; i < 3 && mountsAt(mnt) > 0; i++) execFileSync('umount', ['-l', mnt]);
      rmSync(work, { recursive: true, force: true });
    }
  });
});
