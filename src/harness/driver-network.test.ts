// Each driver process gets a loopback of its own: a port taken on this machine's loopback is free
// inside, two wrapped processes bind one port at once, the wrapper leaves the pid the harness
// started as the driver's, and a user that is not root gets a user namespace too, keeping its uid.
// --network host leaves the command as it is.
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import net from 'node:net';
import { distPath } from './dist-path.js';
import { describeDriverNetwork, driverNetwork, inDriverNetwork } from './driver-network.js';

/** A Python one-liner that binds 127.0.0.1:PORT and prints its pid and uid (or the error, exit 1). */
const BIND = 'import os,socket,sys\ns=socket.socket()\ntry:\n s.bind(("127.0.0.1",int(sys.argv[1])))\nexcept OSError as e:\n print(e); sys.exit(1)\nprint(os.getpid(), os.getuid())';

async function listening(): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('driver network (a namespace per driver process)', () => {
  it('is a network namespace on this machine (root), said in the gate\'s words', () => {
    const n = driverNetwork();
    expect(n, describeDriverNetwork(n)).toEqual({ isolation: process.getuid?.() === 0 ? 'namespace' : 'user-namespace' });
    expect(describeDriverNetwork(n)).toContain('recovery slots never share a port');
    expect(describeDriverNetwork(driverNetwork('host'))).toMatch(/^shared by every driver process \(--network host\): recovery slots share one loopback/);
  });

  it('gives each process a loopback of its own: a port taken here is free inside, for two processes at once; the pid started is the driver', async () => {
    const server = await listening();
    try {
      const port = String((server.address() as net.AddressInfo).port);
      const c = inDriverNetwork({ file: 'python3', args: ['-c', BIND, port] });
      const runs = [execa(c.file, c.args, { reject: false }), execa(c.file, c.args, { reject: false })];
      const results = await Promise.all(runs);
      results.forEach((r, i) => {
        expect(r.exitCode, r.stdout + r.stderr).toBe(0);
        // exec all the way: the process the harness started (and kills at a cut) is the driver itself.
        expect(r.stdout.split(' ')[0]).toBe(String(runs[i].pid));
      });
      const host = await execa('python3', ['-c', BIND, port], { reject: false });
      expect(host.exitCode).toBe(1);
      expect(host.stdout).toContain('Address already in use');
      const shared = inDriverNetwork({ file: 'python3', args: ['-c', BIND, port], network: 'host' });
      expect(shared).toEqual({ file: 'python3', args: ['-c', BIND, port], network: 'host' });
    } finally {
      server.close();
    }
  });

  it('not root: a user and network namespace, the driver keeping its own uid', async () => {
    // The probe and the wrapper as user nobody (65534), in a Node process of its own.
    const script = `const m = await import(${JSON.stringify(distPath('src/harness/driver-network.js'))});
      const n = m.driverNetwork(); const c = m.inDriverNetwork({ file: 'python3', args: ['-c', ${JSON.stringify(BIND)}, '8080'] });
      const { execFileSync } = await import('node:child_process');
      console.log(JSON.stringify({ n, out: n.isolation === 'shared' ? '' : execFileSync(c.file, c.args, { encoding: 'utf8' }).trim() }));`;
    const r = await execa('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, '--input-type=module', '-e', script], { reject: false, cwd: '/' });
    expect(r.exitCode, r.stderr).toBe(0);
    const { n, out } = JSON.parse(r.stdout) as { n: { isolation: string }; out: string };
    expect(n.isolation).toBe('user-namespace');
    // Its pid, then its uid: nobody's own, not the root of its user namespace (a server that refuses root still starts).
    expect(out).toMatch(/^\d+ 65534$/);
  });
});
