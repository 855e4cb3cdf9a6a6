#!/usr/bin/env python3
"""A powercut cluster driver (docs/driver-protocol.md, "Clusters") for a tiny replicated log.

Each node is a server (node.py) keeping a log in its own folder; this driver is the client and the
leader. A write gets the next seq and is sent to every running node; it is confirmed (its
`written` and `durable` lines) once a majority has it on disk. An ack moves the watermark (the
first unacked seq) and is confirmed once a majority has that on disk. Opening asks every node what
it holds, takes the longest log (every log is a prefix of the one sequence the leader wrote, and a
confirmed entry is on a majority, so the longest holds it) and the highest watermark, and gives
them to every node. A node the harness cut is restarted when the harness asks, and given what it
missed (its log cut to what it shares with the leader's, then the rest).

  python3 driver.py                      the correct log
  python3 driver.py --ack-before-fsync   known-bad: nodes answer an append before it is on disk

powercut driver check --nodes 3 -- python3 examples/cluster-driver/driver.py
powercut gate --driver 'python3 examples/cluster-driver/driver.py' --nodes 3
"""
import json
import os
import queue
import struct
import subprocess
import sys
import threading
import time
import zlib

NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'node.py')
CONTRACT = {'replayBound': {'ackBatchSize': 1, 'outOfOrderAcksDurable': False}}
# A restart the harness asks for comes within this long of the cut (the bound it gives itself).
RESTART_WAIT_S = 20
DRAIN_BATCH = 64
LIVENESS_SIZES = [64, 1500, 9]


def payload(event_id, size):
    period = bytes(((event_id * 131 + i * 7) % 255) + 1 for i in range(255))
    return struct.pack('<II', event_id, size) + (period * (size // 255 + 1))[8:size]


def summarize(data):
    event_id = struct.unpack_from('<I', data)[0] if len(data) >= 8 else None
    return (event_id or None), len(data), zlib.crc32(data)


class QueueError(Exception):
    pass


class Down(Exception):
    """The node's server is gone (killed at a cut): its pipe closed."""


class Out:
    """Lines on stdout, each flushed, then its marker stat'ed (docs/driver-protocol.md, "Markers")."""

    def __init__(self, mark):
        self.mark = mark
        self.lines = 0

    def emit(self, **line):
        sys.stdout.write(json.dumps(line, separators=(',', ':')) + '\n')
        sys.stdout.flush()
        self.lines += 1
        if self.mark:
            try:
                os.stat(os.path.join(self.mark, str(self.lines)))
            except FileNotFoundError:
                pass


class Server:
    """One node's server process, in a process group of its own, spoken to over its pipes."""

    def __init__(self, node, folder, args):
        self.node = node
        self.proc = subprocess.Popen([sys.executable, '-S', NODE, *args, folder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     start_new_session=True, text=True)

    def send(self, cmd):
        try:
            self.proc.stdin.write(json.dumps(cmd) + '\n')
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            raise Down() from e

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise Down()
        reply = json.loads(line)
        if 'error' in reply:
            raise QueueError(f'node {self.node}: {reply["error"]}')
        return reply

    def call(self, cmd):
        self.send(cmd)
        return self.receive()

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Cluster:
    def __init__(self, spec, out, restarts, node_args):
        self.nodes = spec['nodes']
        self.majority = len(self.nodes) // 2 + 1
        self.out = out
        self.restarts = restarts  # node numbers the harness asked to restart, from the stdin reader
        self.node_args = node_args
        self.servers = {}  # node -> Server, only while it runs
        self.down = set()  # nodes seen gone, to be restarted before the run ends
        self.opened = False
        self.log = []  # every entry's bytes, seq = index + 1
        self.watermark = 1
        self.acked = set()  # seqs acked (the in-order ones are below the watermark)
        self.delivered = set()  # seqs delivered in this session
        self.next_id = spec['idBase']  # the last event id taken

    # ---- nodes ---------------------------------------------------------------------------

    def start(self, node, restarted=False):
        s = Server(node, self.nodes[node]['dir'], self.node_args)
        self.servers[node] = s
        self.down.discard(node)
        line = {'t': 'node', 'node': node, 'pgid': s.proc.pid}
        if restarted:
            line['restarted'] = True
        self.out.emit(**line)  # before the server touches its folder: it waits for a command

    def lost(self, node):
        s = self.servers.pop(node, None)
        if s:
            self.down.add(node)

    def catch_up(self, node):
        """Gives a (re)started node the leader's log and watermark: its own cut to what they share, then the rest."""
        s = self.servers[node]
        held = [bytes.fromhex(h) for h in s.call({'op': 'state'})['entries']]
        same = 0
        while same < min(len(held), len(self.log)) and held[same] == self.log[same]:
            same += 1
        s.call({'op': 'append', 'from': same, 'data': [e.hex() for e in self.log[same:]]})['count']
        s.call({'op': 'ack', 'upto': self.watermark})

    def restart_asked(self, wait_s):
        """Carries out the restarts the harness asked for (waiting up to wait_s for one); the nodes restarted."""
        done = []
        try:
            node = self.restarts.get(timeout=wait_s) if wait_s > 0 else self.restarts.get_nowait()
        except queue.Empty:
            return done
        while True:
            old = self.servers.pop(node, None)
            if old:
                old.stop()
            self.start(node, restarted=True)
            if self.opened:
                try:
                    self.catch_up(node)
                    done.append(node)
                except Down:
                    self.lost(node)
            try:
                node = self.restarts.get_nowait()
            except queue.Empty:
                return done

    def quorum(self, build, what):
        """Sends build(server) to every running node at once; returns once a majority answered (restarted nodes catch up)."""
        sent = []
        for node, s in list(self.servers.items()):
            try:
                s.send(build(s))
                sent.append(node)
            except Down:
                self.lost(node)
        ok = set()
        for node in sent:
            try:
                self.servers[node].receive()
                ok.add(node)
            except Down:
                self.lost(node)
        deadline = time.monotonic() + RESTART_WAIT_S
        while len(ok) < self.majority:
            left = deadline - time.monotonic()
            if left <= 0:
                raise QueueError(f'{what}: only {len(ok)} of {len(self.nodes)} nodes have it, fewer than a majority, '
                                 f'and no restart came within {RESTART_WAIT_S} s')
            ok.update(self.restart_asked(left))  # a restarted node is given everything, this too

    # ---- the queue ------------------------------------------------------------------------

    def open(self):
        if not self.servers and not self.down:
            for node in range(len(self.nodes)):
                self.start(node)
        deadline = time.monotonic() + RESTART_WAIT_S
        while True:
            states = {}
            for node, s in list(self.servers.items()):
                try:
                    states[node] = s.call({'op': 'state'})
                except Down:
                    self.lost(node)
            if len(states) == len(self.nodes):
                break
            # A node cut while the cluster opens: every node must answer (the longest log is sure only with all of them).
            left = deadline - time.monotonic()
            if left <= 0:
                raise QueueError(f'open: nodes {sorted(self.down)} were not restarted within {RESTART_WAIT_S} s')
            self.restart_asked(left)
        logs = {node: [bytes.fromhex(h) for h in st['entries']] for node, st in states.items()}
        self.log = max(logs.values(), key=len)
        self.watermark = min(max(st['ack'] for st in states.values()), len(self.log) + 1)
        self.acked = {seq for seq in self.acked if seq >= self.watermark}
        self.delivered = set()
        self.opened = True

        def give(s):
            same = 0
            held = logs[s.node]
            while same < min(len(held), len(self.log)) and held[same] == self.log[same]:
                same += 1
            return {'op': 'append', 'from': same, 'data': [e.hex() for e in self.log[same:]]}
        self.quorum(give, 'open')  # nodes restarted meanwhile get the log by catch_up
        self.quorum(lambda s: {'op': 'ack', 'upto': self.watermark}, 'open')
        self.out.emit(t='open', durableSeq=len(self.log), durableFirstUnackedSeq=self.watermark)

    def write(self, sizes, wait):
        ids = []
        for size in sizes:  # every writer starts before any finishes
            self.next_id += 1
            ids.append(self.next_id)
            self.out.emit(t='write-intent', id=self.next_id, size=size)
        seqs = []
        for event_id, size in zip(ids, sizes):
            self.log.append(payload(event_id, size))
            seq = len(self.log)
            self.quorum(lambda s, seq=seq: {'op': 'append', 'from': seq - 1, 'data': [self.log[seq - 1].hex()]}, f'write of id {event_id}')
            self.out.emit(t='written', id=event_id, seq=seq)
            self.out.emit(t='durable', durableSeq=seq, durableFirstUnackedSeq=self.watermark)
            seqs.append(seq)
        if wait:
            for seq in seqs:
                self.out.emit(t='waited', seq=seq)
        return seqs

    def read(self, max_events):
        ready = [seq for seq in range(self.watermark, len(self.log) + 1) if seq not in self.acked and seq not in self.delivered]
        for seq in ready[:max_events]:
            self.delivered.add(seq)
            event_id, size, crc = summarize(self.log[seq - 1])
            self.out.emit(t='delivered', seq=seq, id=event_id, size=size, crc=crc)
        return len(ready[:max_events])

    def unacked(self):
        return sorted(seq for seq in self.delivered if seq not in self.acked)

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
            self.quorum(lambda s: {'op': 'ack', 'upto': mark}, 'ack')
            self.out.emit(t='durable', durableSeq=len(self.log), durableFirstUnackedSeq=mark)
        self.out.emit(t='acked', seqs=seqs)

    def close(self):
        """Stops every server; a node found killed (not exited) is awaited (bounded): the harness restarts it, then it stops too."""
        self.out.emit(t='close-intent')
        deadline = time.monotonic() + RESTART_WAIT_S
        while True:
            self.restart_asked(0)
            for node, s in self.servers.items():
                s.stop()
                if s.proc.returncode < 0:  # killed by a signal: a cut the harness will ask to restart
                    self.down.add(node)
            self.servers = {}
            left = deadline - time.monotonic()
            if not self.down or left <= 0:
                break
            self.restart_asked(left)
        if self.down:
            print(f'driver.py: nodes {sorted(self.down)} cut and not restarted within {RESTART_WAIT_S} s', file=sys.stderr)
        self.out.emit(t='closed')


class Driver:
    def __init__(self, spec, cluster):
        self.spec = spec
        self.c = cluster

    def steps(self, steps):
        for step in steps:
            self.c.restart_asked(0)
            op = step['op']
            if op == 'write':
                self.c.write(step['sizesBytes'], step.get('waitDurable', False))
            elif op == 'waitDurable':
                if self.c.log:
                    self.c.out.emit(t='waited', seq=len(self.c.log))
            elif op == 'read':
                self.c.read(step['maxEvents'])
            elif op == 'ack':
                u, n = self.c.unacked(), step['count']
                picked = u[:n] if step['order'] == 'oldest' else u[::-1][:n] if step['order'] == 'newest' else u[::2][:n]
                self.c.ack(sorted(picked))
            elif op == 'checkpoint':  # every write and ack is on a majority's disk already
                self.c.out.emit(t='checkpoint-intent')
                self.c.out.emit(t='checkpointed')
            elif op == 'reopen':  # a new session of the client: the servers run on, what they hold is read again
                self.c.out.emit(t='close-intent')
                self.c.out.emit(t='closed')
                self.c.open()
            elif op == 'concurrently':  # the branches' steps in turn: one leader, one call at a time
                branches = [list(b) for b in step['branches']]
                while any(branches):
                    for b in branches:
                        if b:
                            self.steps([b.pop(0)])
            else:
                raise QueueError(f'unknown step {op!r}')

    def run(self):
        self.c.open()
        if self.spec['mode'] == 'workload':
            self.steps(self.spec['workload']['steps'])
        else:
            count = 0
            while n := self.c.read(DRAIN_BATCH):
                count += n
                self.c.ack(self.c.unacked())
            self.c.out.emit(t='drained', count=count)
            seqs = self.c.write(LIVENESS_SIZES, False)
            self.c.out.emit(t='waited', seq=max(seqs))
            self.c.read(len(seqs))
            self.c.ack(self.c.unacked())
        self.c.close()


def read_restarts(restarts):
    """The harness's restart commands, as they come on stdin after the spec."""
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
        except ValueError:
            continue
        if isinstance(cmd, dict) and cmd.get('cmd') == 'restart' and isinstance(cmd.get('node'), int):
            restarts.put(cmd['node'])


def main():
    node_args = [a for a in sys.argv[1:] if a == '--ack-before-fsync']
    unknown = [a for a in sys.argv[1:] if a != '--ack-before-fsync']
    if unknown:
        print(f'driver.py: unknown option {unknown[0]} (the only one is --ack-before-fsync)', file=sys.stderr)
        return 2
    try:
        spec = json.loads(sys.stdin.readline())
        if not isinstance(spec, dict) or spec.get('mode') not in ('workload', 'drain'):
            raise ValueError('mode must be workload or drain')
        if not isinstance(spec.get('nodes'), list) or len(spec['nodes']) < 2:
            raise ValueError('nodes must list the cluster\'s nodes (2 or more): this driver runs a cluster (gate --nodes N)')
        if spec['mode'] == 'workload' and not isinstance(spec.get('workload', {}).get('steps'), list):
            raise ValueError('workload.steps must be a list')
        if not isinstance(spec.get('idBase'), int):
            raise ValueError('idBase must be an integer')
    except (ValueError, AttributeError) as e:
        print(f'driver.py: bad spec: {e}', file=sys.stderr)
        return 2
    restarts = queue.Queue()
    threading.Thread(target=read_restarts, args=(restarts,), daemon=True).start()
    out = Out(spec.get('mark'))
    out.emit(t='hello', protocol=1, target='example-replicated-log', contract=CONTRACT)
    cluster = Cluster(spec, out, restarts, node_args)
    try:
        Driver(spec, cluster).run()
    except Exception as e:  # noqa: BLE001
        out.emit(t='error', where='run', message=f'{type(e).__name__}: {e}')
        for s in cluster.servers.values():
            s.proc.kill()
        return 3
    out.emit(t='done')
    return 0


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    os._exit(code)  # not sys.exit: the stdin reader thread may hold stdin's lock at interpreter shutdown
