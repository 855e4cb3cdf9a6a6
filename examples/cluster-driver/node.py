#!/usr/bin/env python3
"""One node of the example replicated log: a server that keeps a log of records in its own folder.

The driver (driver.py) starts one per node, in a process group of its own, and talks to it over
its stdin and stdout: one JSON command a line, one JSON reply a line. Nothing else names the node
(no port, no address), so a new driver started on a copy of the folder finds everything the node
had. The server touches its folder only once the first command comes (the driver prints the node's
line first), and exits when its stdin closes (its driver is gone).

Files in the node's folder:
  entries   the log: records of <seq u32><length u32><crc32 u32> then the event's bytes, seq 1, 2, ...
  acks      the ack watermark: records of <first unacked seq u32><crc32 u32>; the last whole one counts

Commands:
  {"op":"state"}                        -> {"entries":[hex,...],"ack":W}   (a torn tail is cut off first)
  {"op":"append","from":i,"data":[...]} -> {"count":n}   the log cut to its first i records, then these
                                                         appended; on disk (fsync) before the reply
  {"op":"ack","upto":W}                 -> {"ok":true}   the watermark, on disk before the reply

--ack-before-fsync (the known-bad node): an append is answered before its fsync, which the node
makes when its next command comes (a lazy group commit): what a majority "has" may be only in the
page cache of every node when the power goes.
"""
import json
import os
import struct
import sys
import zlib

ENTRY_HEADER = struct.Struct('<III')
ACK_RECORD = struct.Struct('<II')


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Node:
    def __init__(self, folder, sync_appends):
        self.folder = folder
        self.sync_appends = sync_appends
        self.entries_fd = None
        self.acks_fd = None
        self.offsets = []  # where each whole record of `entries` starts, and the end of the last
        self.ack = 1
        self.acks_end = 0
        self.unsynced = False  # --ack-before-fsync: appends answered and not yet fsynced

    def open_files(self):
        """Opens (creating) the node's two files; new (empty) ones are made durable by one fsync of the folder."""
        created = False
        fds = []
        for name in ('entries', 'acks'):
            path = os.path.join(self.folder, name)
            created |= not os.path.exists(path)
            fds.append(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
        if created:
            fsync_dir(self.folder)
        self.entries_fd, self.acks_fd = fds

    def load(self):
        if self.entries_fd is None:
            self.open_files()
        data = os.pread(self.entries_fd, os.fstat(self.entries_fd).st_size, 0)
        entries, offsets, at = [], [0], 0
        while at + ENTRY_HEADER.size <= len(data):
            seq, length, crc = ENTRY_HEADER.unpack_from(data, at)
            body = data[at + ENTRY_HEADER.size: at + ENTRY_HEADER.size + length]
            if seq != len(entries) + 1 or len(body) != length or zlib.crc32(body) != crc:
                break
            entries.append(body)
            at += ENTRY_HEADER.size + length
            offsets.append(at)
        if at != len(data):  # a torn tail: cut off, so new records follow the last whole one
            os.ftruncate(self.entries_fd, at)
            os.fsync(self.entries_fd)
        self.offsets = offsets
        acks = os.pread(self.acks_fd, os.fstat(self.acks_fd).st_size, 0)
        self.ack, self.acks_end = 1, 0
        while self.acks_end + ACK_RECORD.size <= len(acks):
            upto, crc = ACK_RECORD.unpack_from(acks, self.acks_end)
            if zlib.crc32(struct.pack('<I', upto)) != crc:
                break
            self.ack = upto
            self.acks_end += ACK_RECORD.size
        if self.acks_end != len(acks):
            os.ftruncate(self.acks_fd, self.acks_end)
            os.fsync(self.acks_fd)
        return {'entries': [e.hex() for e in entries], 'ack': self.ack}

    def append(self, first, data):
        if self.entries_fd is None:
            self.load()
        first = min(first, len(self.offsets) - 1)
        if first < len(self.offsets) - 1:
            os.ftruncate(self.entries_fd, self.offsets[first])
            del self.offsets[first + 1:]
        out = bytearray()
        for k, hexdata in enumerate(data):
            body = bytes.fromhex(hexdata)
            out += ENTRY_HEADER.pack(first + k + 1, len(body), zlib.crc32(body)) + body
            self.offsets.append(self.offsets[-1] + ENTRY_HEADER.size + len(body))
        if out:
            os.pwrite(self.entries_fd, bytes(out), self.offsets[first])
        if self.sync_appends:
            os.fsync(self.entries_fd)
        else:
            self.unsynced = True
        return {'count': len(self.offsets) - 1}

    def set_ack(self, upto):
        if self.acks_fd is None:
            self.load()
        if upto > self.ack:
            os.pwrite(self.acks_fd, ACK_RECORD.pack(upto, zlib.crc32(struct.pack('<I', upto))), self.acks_end)
            os.fsync(self.acks_fd)
            self.acks_end += ACK_RECORD.size
            self.ack = upto
        return {'ok': True}


def main():
    args = sys.argv[1:]
    sync_appends = '--ack-before-fsync' not in args
    folders = [a for a in args if not a.startswith('--')]
    if len(folders) != 1:
        print('usage: node.py [--ack-before-fsync] FOLDER', file=sys.stderr)
        return 2
    node = Node(folders[0], sync_appends)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd['op']
        if node.unsynced:  # the known-bad node's late fsync, before whatever comes next
            os.fsync(node.entries_fd)
            node.unsynced = False
        if op == 'state':
            reply = node.load()
        elif op == 'append':
            reply = node.append(cmd['from'], cmd['data'])
        elif op == 'ack':
            reply = node.set_ack(cmd['upto'])
        else:
            reply = {'error': f'unknown op {op!r}'}
        sys.stdout.write(json.dumps(reply) + '\n')
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
