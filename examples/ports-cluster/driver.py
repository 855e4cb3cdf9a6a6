#!/usr/bin/env python3
"""A powercut cluster driver (docs/driver-protocol.md, "Clusters") for a small store of N nodes that
find each other by TCP ports kept in their data folders, as Raft stores and etcd do.

Each node is a server (node.py) with a member list (every node's port) in its own folder, written
once when the cluster first starts: the driver picks free ports then, and every later start, on
the same disks or on copies of them, listens on the same ports. Node 0 leads: this driver sends it
each write and ack over TCP, and it answers once a majority of nodes has them on disk. Opening asks
the leader to gather every node's log and keep the longest. A node the harness cut is restarted
when the harness asks; the leader gives it what it missed when it reconnects.

Nothing here chooses new ports for a recovery: in an offline run the nodes start on the ports their
folders name, as they would on the machine they came from (the harness gives every driver process
a loopback of its own).

  python3 driver.py

powercut driver check --nodes 3 -- python3 examples/ports-cluster/driver.py
powercut gate --driver 'python3 examples/ports-cluster/driver.py' --nodes 3
"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'node.py')
CONTRACT = {'replayBound': {'ackBatchSize': 1, 'outOfOrderAcksDurable': False}}
# The harness restarts a cut node within this long (the bound it gives itself).
WAIT_S = 20
DRAIN_BATCH = 64
LIVENESS_SIZES = [64, 1500, 9]


def payload(event_id, size):
    period = bytes(((event_id * 131 + i * 7) % 255) + 1 for i in range(255))
    return struct.pack('<II', event_id, size) + (period * (size // 255 + 1))[8:size]


def summarize(data):
    event_id = struct.unpack_from('<I', data)[0] if len(data) >= 8 else None
    return (event_id or None), len(data), zlib.crc32(data)


def free_ports(n):
    """n ports nobody listens on now, for the cluster's first start."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(('127.0.0.1', 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class QueueError(Exception):
    pass


class LeaderLost(Exception):
    """The leader was cut during a request; it runs again now."""


class NodeDown(Exception):
    """A node's process is gone (killed at a cut): its pipe closed."""


class Out:
    """Lines on stdout, each flushed, then its marker stat'ed; one at a time (the restart thread prints too)."""

    def __init__(self, mark):
        self.mark = mark
        self.lines = 0
        self.lock = threading.Lock()

    def emit(self, **line):
        with self.lock:
            sys.stdout.write(json.dumps(line, separators=(',', ':')) + '\n')
            sys.stdout.flush()
            self.lines += 1
            if self.mark:
                try:
                    os.stat(os.path.join(self.mark, str(self.lines)))
                except FileNotFoundError:
                    pass


class Nodes:
    """The node processes: started, restarted when the harness asks (on the stdin reader's thread), stopped."""

    def __init__(self, spec, out):
        self.dirs = [n['dir'] for n in spec['nodes']]
        self.out = out
        self.procs = {}
        self.members = None  # every node's port, once the cluster is up
        self.lock = threading.Condition()

    def spawn(self, k, restarted=False):
        proc = subprocess.Popen([sys.executable, '-S', NODE, self.dirs[k]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                start_new_session=True, text=True)
        self.procs[k] = proc
        line = {'t': 'node', 'node': k, 'pgid': proc.pid}
        if restarted:
            line['restarted'] = True
        self.out.emit(**line)  # before the node touches its folder: it waits for a command
        return proc

    @staticmethod
    def call(proc, cmd):
        try:
            proc.stdin.write(json.dumps(cmd) + '\n')
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError, ValueError) as e:
            raise NodeDown() from e
        if not line:
            raise NodeDown()
        reply = json.loads(line)
        if 'error' in reply:
            raise QueueError(reply['error'])
        return reply

    def ask(self, k, cmd):
        """`cmd` to node k, waiting for its restart if it is cut meanwhile (called with the lock held)."""
        while True:
            p = self.procs[k]
            try:
                return self.call(p, cmd)
            except NodeDown:
                self.wait_restarted(k, p)

    def start_all(self):
        """Starts every node; the member list is the one their folders hold, or new free ports at the first start."""
        with self.lock:
            for k in range(len(self.dirs)):
                self.spawn(k)
            known = [self.ask(k, {'op': 'members'})['members'] for k in range(len(self.dirs))]
            members = next((m for m in known if m), None) or free_ports(len(self.dirs))
            for k in range(len(self.dirs)):
                self.ask(k, {'op': 'listen', 'members': members, 'me': k})
            self.members = members

    def restart(self, k):
        """The harness's restart of node k (its process was killed at a cut)."""
        with self.lock:
            old = self.procs.get(k)
            if old:
                old.kill()
                old.wait()
            p = self.spawn(k, restarted=True)
            if self.members is not None:  # else start_all, waiting for it, brings it up
                try:
                    self.call(p, {'op': 'listen', 'members': self.members, 'me': k})
                except (QueueError, NodeDown) as e:
                    print(f'driver.py: restarting node {k}: {e!r}', file=sys.stderr)
            self.lock.notify_all()

    def wait_restarted(self, k, old):
        """Waits (bounded) until node k runs in a process other than `old` (the harness restarts a cut node)."""
        deadline = time.monotonic() + WAIT_S
        with self.lock:
            while self.procs.get(k) is old:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise QueueError(f'node {k} stopped answering and was not restarted within {WAIT_S} s')
                self.lock.wait(left)

    def stop(self):
        """Stops every node; one killed by a signal (a cut) is awaited until the harness restarted it, then stopped too."""
        deadline = time.monotonic() + WAIT_S
        while True:
            with self.lock:
                procs = dict(self.procs)
            cut = []
            for k, p in procs.items():
                if p.poll() is None:
                    try:
                        p.stdin.close()
                        p.wait(timeout=5)
                    except (OSError, subprocess.TimeoutExpired):
                        pass
                if p.poll() is None:
                    p.kill()
                    p.wait()
                elif p.returncode < 0:
                    cut.append(k)
            with self.lock:
                while any(self.procs[k] is procs[k] for k in cut) and time.monotonic() < deadline:
                    self.lock.wait(deadline - time.monotonic())
                if all(self.procs[k] is procs[k] for k in self.procs):
                    return


class Cluster:
    def __init__(self, spec, out, nodes):
        self.out = out
        self.nodes = nodes
        self.conn = None
        self.watermark = 1
        self.count = 0
        self.acked = set()
        self.delivered = set()
        self.next_id = spec['idBase']

    def leader(self, request, retry=True):
        """One request to the leader. If it is down (cut): waits for its restart, reopens it (it gathers
        the members' logs), then asks again, or with retry=False raises LeaderLost once it runs again."""
        deadline = time.monotonic() + WAIT_S
        while True:
            proc = self.nodes.procs[0]
            sent = False
            try:
                if self.conn is None:
                    self.conn = socket.create_connection(('127.0.0.1', self.nodes.members[0]), timeout=WAIT_S * 2)
                    self.reader = self.conn.makefile('r')
                    if request['op'] != 'open':
                        self.call({'op': 'open'})
                sent = True
                return self.call(request)
            except OSError:
                if self.conn is not None:
                    self.conn.close()
                    self.conn = None
                if sent and not retry:  # it may have been carried out: the caller looks
                    self.nodes.wait_restarted(0, proc)
                    raise LeaderLost()
                if proc.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)  # killed a moment ago, not yet reaped
                    continue
                self.nodes.wait_restarted(0, proc)

    def call(self, request):
        self.conn.sendall((json.dumps(request) + '\n').encode())
        line = self.reader.readline()
        if not line:
            raise ConnectionError('the leader closed the connection')
        reply = json.loads(line)
        if 'error' in reply:
            raise QueueError(f'leader: {reply["error"]}')
        return reply

    def open(self):
        r = self.leader({'op': 'open'})
        self.count, self.watermark = r['count'], r['ack']
        self.acked = {s for s in self.acked if s >= self.watermark}
        self.delivered = set()
        self.out.emit(t='open', durableSeq=self.count, durableFirstUnackedSeq=self.watermark)

    def write(self, sizes, wait):
        ids = []
        for size in sizes:
            self.next_id += 1
            ids.append(self.next_id)
            self.out.emit(t='write-intent', id=self.next_id, size=size)
        seqs = []
        for event_id, size in zip(ids, sizes):
            data = payload(event_id, size)
            seq = self.append(data)
            self.count = max(self.count, seq)
            self.out.emit(t='written', id=event_id, seq=seq)
            self.out.emit(t='durable', durableSeq=seq, durableFirstUnackedSeq=self.watermark)
            seqs.append(seq)
        if wait:
            for seq in seqs:
                self.out.emit(t='waited', seq=seq)
        return seqs

    def append(self, data):
        """Writes `data` once: a write whose leader was cut before it answered may be in the log already (the next seq)."""
        while True:
            try:
                return self.leader({'op': 'write', 'data': data.hex()}, retry=False)['seq']
            except LeaderLost:
                there = self.leader({'op': 'read', 'from': self.count + 1, 'max': 1})['entries']
                if there and bytes.fromhex(there[0]) == data:
                    return self.count + 1

    def read(self, max_events):
        got = self.leader({'op': 'read', 'from': self.watermark, 'max': 1_000_000})['entries']
        n = 0
        for i, e in enumerate(got):
            seq = self.watermark + i
            if n == max_events or seq in self.acked or seq in self.delivered:
                continue
            self.delivered.add(seq)
            event_id, size, crc = summarize(bytes.fromhex(e))
            self.out.emit(t='delivered', seq=seq, id=event_id, size=size, crc=crc)
            n += 1
        return n

    def unacked(self):
        return sorted(s for s in self.delivered if s not in self.acked)

    def ack(self, seqs):
        if not seqs:
            return
        self.out.emit(t='ack-intent', seqs=seqs)
        self.acked.update(seqs)
        mark = self.watermark
        while mark in self.acked:
            mark += 1
        if mark > self.watermark:  # in-order acks move the watermark, on a majority's disk before `acked`
            self.watermark = mark
            self.leader({'op': 'set-ack', 'upto': mark})
            self.out.emit(t='durable', durableSeq=self.count, durableFirstUnackedSeq=mark)
        self.out.emit(t='acked', seqs=seqs)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def steps(c, out, todo):
    for step in todo:
        op = step['op']
        if op == 'write':
            c.write(step['sizesBytes'], step.get('waitDurable', False))
        elif op == 'waitDurable':
            if c.count:
                out.emit(t='waited', seq=c.count)
        elif op == 'read':
            c.read(step['maxEvents'])
        elif op == 'ack':
            u, n = c.unacked(), step['count']
            picked = u[:n] if step['order'] == 'oldest' else u[::-1][:n] if step['order'] == 'newest' else u[::2][:n]
            c.ack(sorted(picked))
        elif op == 'checkpoint':  # every write and ack is on a majority's disk already
            out.emit(t='checkpoint-intent')
            out.emit(t='checkpointed')
        elif op == 'reopen':  # a new client session: the nodes run on
            out.emit(t='close-intent')
            out.emit(t='closed')
            c.open()
        elif op == 'concurrently':  # the branches' steps in turn: one leader, one call at a time
            branches = [list(b) for b in step['branches']]
            while any(branches):
                for b in branches:
                    if b:
                        steps(c, out, [b.pop(0)])
        else:
            raise QueueError(f'unknown step {op!r}')


def run(spec, out, nodes):
    c = Cluster(spec, out, nodes)
    nodes.start_all()
    c.open()
    if spec['mode'] == 'workload':
        steps(c, out, spec['workload']['steps'])
    else:
        count = 0
        while n := c.read(DRAIN_BATCH):
            count += n
            c.ack(c.unacked())
        out.emit(t='drained', count=count)
        seqs = c.write(LIVENESS_SIZES, False)
        out.emit(t='waited', seq=max(seqs))
        c.read(len(seqs))
        c.ack(c.unacked())
    out.emit(t='close-intent')
    c.close()
    nodes.stop()
    out.emit(t='closed')


def bad_spec(line):
    try:
        spec = json.loads(line)
        if not isinstance(spec, dict) or spec.get('mode') not in ('workload', 'drain'):
            return None, 'mode must be workload or drain'
        if not isinstance(spec.get('nodes'), list) or len(spec['nodes']) < 2:
            return None, 'nodes must list the cluster\'s nodes (2 or more): this driver runs a cluster (gate --nodes N)'
        if spec['mode'] == 'workload' and not isinstance(spec.get('workload', {}).get('steps'), list):
            return None, 'workload.steps must be a list'
        if not isinstance(spec.get('idBase'), int):
            return None, 'idBase must be an integer'
        return spec, None
    except ValueError as e:
        return None, str(e)


def main():
    if sys.argv[1:]:
        print(f'driver.py: unknown argument {sys.argv[1]} (it takes none)', file=sys.stderr)
        return 2
    line = sys.stdin.readline()
    spec, why = bad_spec(line)
    if spec is None:
        print(f'driver.py: bad spec: {why}', file=sys.stderr)
        return 2
    out = Out(spec.get('mark'))
    nodes = Nodes(spec, out)

    def read_restarts():
        for cmd_line in sys.stdin:
            try:
                cmd = json.loads(cmd_line)
            except ValueError:
                continue
            if isinstance(cmd, dict) and cmd.get('cmd') == 'restart' and isinstance(cmd.get('node'), int):
                nodes.restart(cmd['node'])
    threading.Thread(target=read_restarts, daemon=True).start()
    out.emit(t='hello', protocol=1, target='example-ports-cluster', contract=CONTRACT)
    try:
        run(spec, out, nodes)
    except Exception as e:  # noqa: BLE001
        out.emit(t='error', where='run', message=f'{type(e).__name__}: {e}')
        for p in nodes.procs.values():
            p.kill()
        return 3
    out.emit(t='done')
    return 0


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    os._exit(code)  # not sys.exit: the stdin reader thread may hold stdin's lock at interpreter shutdown
