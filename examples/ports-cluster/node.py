#!/usr/bin/env python3
"""One node of the example store: a TCP server that keeps a log, an ack watermark and its cluster's
member list (every node's port) in its own folder.

Like a Raft or etcd member, a node finds its peers by the ports its member list names, and that list
is written once, when the cluster first starts, and never changed: after a power cut, a restart, or
on a copy of the folder, the node listens on the port it always had. Node 0 is the leader: the
driver sends it every write and ack, and it replicates them to the others over TCP before it
answers (a majority on disk). The others only store what the leader sends.

The driver starts the node and speaks to it over stdin and stdout to bring it up; the node touches
its folder only once the first command comes (the driver prints the node's line first), and exits
when its stdin closes (its driver is gone):
  {"op":"members"}                    -> {"members": [port, ...] or null}   the list in its folder
  {"op":"listen","members":[...],"me":k} -> {"port": P}   writes the list if the folder has none
                                                          (on disk first), then listens on its port

Over TCP, one JSON request a line, one JSON reply a line (an error: {"error": "..."}):
  {"op":"state"}                         -> {"entries":[hex,...],"ack":W}
  {"op":"append","from":i,"data":[...]}  -> {"count":n}   log cut to its first i records, then these; fsynced
  {"op":"ack","upto":W}                  -> {"ok":true}   the watermark (first unacked seq); fsynced
and at the leader only:
  {"op":"open"}                          -> {"count":n,"ack":W}   every member's log and watermark
                                            gathered (each must answer), the longest log and highest
                                            watermark given to every member, on disk
  {"op":"write","data":hex}              -> {"seq":n}     appended here and on a majority, on disk
  {"op":"set-ack","upto":W}              -> {"ok":true}   on a majority, on disk
  {"op":"read","from":s,"max":n}         -> {"entries":[hex,...]}   entries from seq s

Files in the folder: members.json (the member list), entries (records of <seq u32><length u32>
<crc32 u32> then the bytes), acks (records of <first unacked seq u32><crc32 u32>; the last whole one
counts).
"""
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
import zlib

ENTRY = struct.Struct('<III')
ACK = struct.Struct('<II')
# How long the leader waits for members to come back (the harness restarts a cut node within this).
WAIT_S = 20


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    """The node's log and watermark on disk."""

    def __init__(self, folder):
        self.folder = folder
        created = False
        fds = []
        for name in ('entries', 'acks'):
            path = os.path.join(folder, name)
            created |= not os.path.exists(path)
            fds.append(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
        if created:
            fsync_dir(folder)
        self.entries_fd, self.acks_fd = fds
        self.entries, self.offsets = [], [0]
        data = os.pread(self.entries_fd, os.fstat(self.entries_fd).st_size, 0)
        at = 0
        while at + ENTRY.size <= len(data):
            seq, length, crc = ENTRY.unpack_from(data, at)
            body = data[at + ENTRY.size: at + ENTRY.size + length]
            if seq != len(self.entries) + 1 or len(body) != length or zlib.crc32(body) != crc:
                break
            self.entries.append(body)
            at += ENTRY.size + length
            self.offsets.append(at)
        if at != len(data):  # a torn tail: cut off, so new records follow the last whole one
            os.ftruncate(self.entries_fd, at)
            os.fsync(self.entries_fd)
        acks = os.pread(self.acks_fd, os.fstat(self.acks_fd).st_size, 0)
        self.ack, self.acks_end = 1, 0
        while self.acks_end + ACK.size <= len(acks):
            upto, crc = ACK.unpack_from(acks, self.acks_end)
            if zlib.crc32(struct.pack('<I', upto)) != crc:
                break
            self.ack, self.acks_end = upto, self.acks_end + ACK.size
        if self.acks_end != len(acks):
            os.ftruncate(self.acks_fd, self.acks_end)
            os.fsync(self.acks_fd)

    def append(self, first, data):
        first = min(first, len(self.entries))
        if first < len(self.entries):
            os.ftruncate(self.entries_fd, self.offsets[first])
            del self.entries[first:], self.offsets[first + 1:]
        out = bytearray()
        for body in data:
            self.entries.append(body)
            out += ENTRY.pack(len(self.entries), len(body), zlib.crc32(body)) + body
            self.offsets.append(self.offsets[-1] + ENTRY.size + len(body))
        os.pwrite(self.entries_fd, bytes(out), self.offsets[first])
        os.fsync(self.entries_fd)
        return len(self.entries)

    def set_ack(self, upto):
        if upto > self.ack:
            os.pwrite(self.acks_fd, ACK.pack(upto, zlib.crc32(struct.pack('<I', upto))), self.acks_end)
            os.fsync(self.acks_fd)
            self.acks_end += ACK.size
            self.ack = upto


class Peer:
    """The leader's connection to another member, at the port the member list gives it."""

    def __init__(self, port):
        self.port = port
        self.sock = None
        self.reader = None

    def call(self, request):
        if self.sock is None:
            self.sock = socket.create_connection(('127.0.0.1', self.port), timeout=WAIT_S)
            self.reader = self.sock.makefile('r')
        self.sock.sendall((json.dumps(request) + '\n').encode())
        line = self.reader.readline()
        if not line:
            raise ConnectionError(f'member at port {self.port} closed the connection')
        reply = json.loads(line)
        if 'error' in reply:
            raise RuntimeError(f'member at port {self.port}: {reply["error"]}')
        return reply

    def drop(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = self.reader = None


class Node:
    def __init__(self, folder, members, me):
        self.store = Store(folder)
        self.me = me
        self.lock = threading.Lock()
        self.peers = {k: Peer(port) for k, port in enumerate(members) if k != me}
        self.synced = set()  # members the leader gave its whole log since it last connected to them

    def sync(self, k):
        """Gives member k the leader's log (from where they agree) and watermark."""
        held = [bytes.fromhex(h) for h in self.peers[k].call({'op': 'state'})['entries']]
        mine = self.store.entries
        same = 0
        while same < min(len(held), len(mine)) and held[same] == mine[same]:
            same += 1
        self.peers[k].call({'op': 'append', 'from': same, 'data': [e.hex() for e in mine[same:]]})
        self.peers[k].call({'op': 'ack', 'upto': self.store.ack})
        self.synced.add(k)

    def replicate(self, request):
        """Sends `request` to every member it can reach (one that reconnects gets the whole log first); returns once a majority has it."""
        deadline = time.monotonic() + WAIT_S
        while True:
            have = 1  # the leader itself
            for k, peer in self.peers.items():
                try:
                    if k not in self.synced:
                        self.sync(k)  # includes what `request` carries
                    else:
                        peer.call(request)
                    have += 1
                except OSError:
                    peer.drop()
                    self.synced.discard(k)
            if have > (len(self.peers) + 1) // 2:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f'only {have} of {len(self.peers) + 1} members answered within {WAIT_S} s')
            time.sleep(0.05)

    def open(self):
        """Gathers every member's log and watermark (each must answer), keeps the longest and highest, gives them to all."""
        deadline = time.monotonic() + WAIT_S
        states = {}
        while len(states) < len(self.peers):
            for k, peer in self.peers.items():
                if k in states:
                    continue
                try:
                    peer.drop()
                    states[k] = peer.call({'op': 'state'})
                except OSError:
                    peer.drop()
            if len(states) < len(self.peers):
                if time.monotonic() > deadline:
                    raise TimeoutError(f'members {sorted(set(self.peers) - set(states))} did not answer within {WAIT_S} s')
                time.sleep(0.05)
        longest = max([self.store.entries] + [[bytes.fromhex(h) for h in s['entries']] for s in states.values()], key=len)
        if len(longest) > len(self.store.entries):
            self.store.append(0, longest)
        self.store.set_ack(min(max([self.store.ack] + [s['ack'] for s in states.values()]), len(self.store.entries) + 1))
        self.synced = set()
        self.replicate(None)  # every member reconnected above: each gets the whole log
        return {'count': len(self.store.entries), 'ack': self.store.ack}

    def handle(self, r):
        op = r['op']
        s = self.store
        if op == 'state':
            return {'entries': [e.hex() for e in s.entries], 'ack': s.ack}
        if op == 'append':
            return {'count': s.append(r['from'], [bytes.fromhex(h) for h in r['data']])}
        if op == 'ack':
            s.set_ack(r['upto'])
            return {'ok': True}
        if self.me != 0:
            return {'error': f'{op} is for the leader (node 0)'}
        if op == 'open':
            return self.open()
        if op == 'write':
            s.append(len(s.entries), [bytes.fromhex(r['data'])])
            seq = len(s.entries)
            self.replicate({'op': 'append', 'from': seq - 1, 'data': [r['data']]})
            return {'seq': seq}
        if op == 'set-ack':
            s.set_ack(r['upto'])
            self.replicate({'op': 'ack', 'upto': s.ack})
            return {'ok': True}
        if op == 'read':
            return {'entries': [e.hex() for e in s.entries[r['from'] - 1:][:r['max']]]}
        return {'error': f'unknown op {op!r}'}


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            node = self.server.node
            with node.lock:
                try:
                    reply = node.handle(json.loads(line))
                except Exception as e:  # noqa: BLE001
                    reply = {'error': f'{type(e).__name__}: {e}'}
            self.wfile.write((json.dumps(reply) + '\n').encode())


class Server(socketserver.ThreadingTCPServer):
    # As servers do: a restarted node binds its port again at once, whatever the last one left in TIME_WAIT.
    allow_reuse_address = True
    daemon_threads = True


def reply(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def main():
    if len(sys.argv) != 2:
        print('usage: node.py FOLDER', file=sys.stderr)
        return 2
    folder = sys.argv[1]
    members_file = os.path.join(folder, 'members.json')
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd['op'] == 'members':
                members = None
                if os.path.exists(members_file):
                    with open(members_file) as f:
                        members = json.load(f)['members']
                reply({'members': members})
            elif cmd['op'] == 'listen':
                if not os.path.exists(members_file):  # the cluster's first start: the list, on disk before anyone is told a port
                    tmp = members_file + '.tmp'
                    with open(tmp, 'w') as f:
                        json.dump({'members': cmd['members'], 'me': cmd['me']}, f)
                        f.flush()
                        os.fsync(f.fileno())
                    os.rename(tmp, members_file)
                    fsync_dir(folder)
                with open(members_file) as f:
                    members = json.load(f)['members']
                server = Server(('127.0.0.1', members[cmd['me']]), Handler)
                server.node = Node(folder, members, cmd['me'])
                threading.Thread(target=server.serve_forever, daemon=True).start()
                reply({'port': members[cmd['me']]})
        except Exception as e:  # noqa: BLE001  (a port in use, a disk error: the driver reports it)
            reply({'error': f'{type(e).__name__}: {e}'})
    return 0


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    os._exit(code)  # the server's threads end with the process
