#!/usr/bin/env python3
"""The powercut driver for minidb (minidb.py): a queue table in a database whose data directory
must be initialised (initdb: about 290 files and fsyncs) before the engine starts.

Its hello line declares "setup": true, so powercut sends it a spec of mode "setup" once, before
any workload (docs/driver-protocol.md, "A starting state"): it runs initdb on the mount and prints
done. powercut makes that directory durable and starts every run from a copy of it, and no crash
state or fault falls inside it: the states it checks are the database's own commits.

  python3 driver.py                  declares a setup (the starting state)
  python3 driver.py --inline-setup   declares none: a run that finds the directory empty (or an
                                     initdb the power interrupted) runs initdb itself first, as a
                                     driver must when the protocol has no setup; then most crash
                                     states powercut lists fall inside initdb

Settings (--settings JSON): {"synchronousCommit": false} is the known-bad setting, PostgreSQL's
`synchronous_commit = off`: a commit is confirmed before its WAL record is flushed.

Serves specs one after another (a JSON object a line) until stdin closes. Exit codes: 0 done,
3 after an error line, 2 for a spec it cannot read.
"""
import json
import os
import shutil
import struct
import sys
import zlib

sys.dont_write_bytecode = True  # keep the example folder clean
from minidb import Database, NotInitialised, initdb  # noqa: E402

CONTRACT = {'replayBound': {'ackBatchSize': 1, 'outOfOrderAcksDurable': False}}
SETTINGS = {'synchronousCommit'}
DRAIN_BATCH = 64
LIVENESS_SIZES = (64, 1500, 9)
EXIT_OK, EXIT_USAGE, EXIT_ERROR = 0, 2, 3


def payload(event_id, size):
    period = bytes(((event_id * 131 + i * 7) % 255) + 1 for i in range(255))
    return struct.pack('<II', event_id, size) + (period * (size // 255 + 1))[8:size]


def summarize(data):
    event_id = struct.unpack_from('<I', data)[0] if len(data) >= 8 else None
    return (event_id or None), len(data), zlib.crc32(data)


class SpecError(Exception):
    pass


def parse_spec(line, inline_setup):
    try:
        spec = json.loads(line)
    except ValueError as e:
        raise SpecError(f'not JSON ({e})') from None
    modes = ('workload', 'drain') if inline_setup else ('workload', 'drain', 'setup')
    if not isinstance(spec, dict) or spec.get('mode') not in modes:
        raise SpecError(f'mode must be one of {", ".join(modes)}, got {spec.get("mode") if isinstance(spec, dict) else spec!r}')
    if not isinstance(spec.get('dir'), str) or not isinstance(spec.get('idBase'), int) or not isinstance(spec.get('settings'), dict):
        raise SpecError('dir (a path), idBase (an integer) and settings (an object) are required')
    unknown = set(spec['settings']) - SETTINGS
    if unknown or not isinstance(spec['settings'].get('synchronousCommit', True), bool):
        raise SpecError(f'settings: only synchronousCommit (true or false) is known, got {json.dumps(spec["settings"])}')
    if spec['mode'] == 'workload' and not isinstance(spec.get('workload', {}).get('steps'), list):
        raise SpecError('workload.steps must be a list')
    return spec


class Out:
    def __init__(self, mark):
        self.mark = mark
        self.lines = 0

    def emit(self, **line):
        data = (json.dumps(line, separators=(',', ':')) + '\n').encode()
        while data:
            data = data[os.write(1, data):]
        self.lines += 1
        if self.mark:
            try:
                os.stat(f'{self.mark}/{self.lines}')
            except FileNotFoundError:
                pass


class Run:
    def __init__(self, spec, out, inline_setup):
        self.spec, self.out, self.inline_setup = spec, out, inline_setup
        self.db = None
        self.next_id = spec['idBase']
        self.last_seq = 0
        self.delivered = set()
        self.acked = set()
        self.where = 'open'

    def open(self):
        folder = self.spec['dir']
        sync = self.spec['settings'].get('synchronousCommit', True)
        try:
            self.db = Database(folder, sync)
        except NotInitialised:
            if not self.inline_setup:
                raise
            # No starting state: this run initialises the directory itself, starting over when a
            # power cut interrupted an earlier initdb (nothing was committed before it completed).
            for name in os.listdir(folder):
                p = os.path.join(folder, name)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
            initdb(folder)
            self.db = Database(folder, sync)
        self.delivered = set()
        self.out.emit(t='open', durableSeq=self.db.last_seq, durableFirstUnackedSeq=self.db.watermark)

    def close(self):
        self.out.emit(t='close-intent')
        self.db.close()
        self.out.emit(t='closed')

    def write(self, sizes, wait):
        ids = []
        for size in sizes:  # every writer starts before any finishes
            self.next_id += 1
            ids.append(self.next_id)
            self.out.emit(t='write-intent', id=self.next_id, size=size)
        seqs = []
        for event_id, size in zip(ids, sizes):
            seq = self.db.insert(payload(event_id, size))
            self.last_seq = seq
            self.out.emit(t='written', id=event_id, seq=seq)
            # The commit returned: the database says it is durable.
            self.out.emit(t='durable', durableSeq=seq, durableFirstUnackedSeq=self.db.watermark)
            seqs.append(seq)
        if wait:
            for seq in seqs:
                self.out.emit(t='waited', seq=seq)
        return seqs

    def read(self, max_events):
        n = 0
        for seq, data in self.db.rows_from(self.db.watermark):
            if n == max_events:
                break
            if seq in self.delivered or seq in self.acked:
                continue
            self.delivered.add(seq)
            event_id, size, crc = summarize(data)
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
        mark = self.db.watermark
        while mark in self.acked:
            mark += 1
        if mark > self.db.watermark:  # in-order acks move the watermark; an ack above a gap waits in memory
            self.db.ack_upto(mark)
            self.out.emit(t='durable', durableSeq=self.last_seq or self.db.last_seq, durableFirstUnackedSeq=mark)
        self.out.emit(t='acked', seqs=seqs)

    def steps(self, steps):
        for i, step in enumerate(steps):
            self.where = f'steps[{i}] ({step["op"]})'
            op = step['op']
            if op == 'write':
                self.write(step['sizesBytes'], step.get('waitDurable', False))
            elif op == 'waitDurable':
                if self.last_seq:
                    self.db.flush()
                    self.out.emit(t='waited', seq=self.last_seq)
            elif op == 'read':
                self.read(step['maxEvents'])
            elif op == 'ack':
                u, n = self.unacked(), step['count']
                picked = u[:n] if step['order'] == 'oldest' else u[::-1][:n] if step['order'] == 'newest' else u[::2][:n]
                self.ack(sorted(picked))
            elif op == 'checkpoint':
                self.out.emit(t='checkpoint-intent')
                self.db.checkpoint()
                self.out.emit(t='checkpointed')
            elif op == 'reopen':
                self.close()
                self.open()
            elif op == 'concurrently':  # the branches' steps in turn
                branches = [list(b) for b in step['branches']]
                while any(branches):
                    for b in branches:
                        if b:
                            self.steps([b.pop(0)])
            else:
                raise ValueError(f'unknown step {op!r}')

    def run(self):
        mode = self.spec['mode']
        if mode == 'setup':
            self.where = 'initdb'
            initdb(self.spec['dir'])
            return
        self.open()
        if mode == 'workload':
            self.steps(self.spec['workload']['steps'])
        else:
            self.where = 'drain'
            count = 0
            while n := self.read(DRAIN_BATCH):
                count += n
                self.ack(self.unacked())
            self.out.emit(t='drained', count=count)
            self.where = 'liveness'
            seqs = self.write(LIVENESS_SIZES, False)
            self.db.flush()
            self.out.emit(t='waited', seq=max(seqs))
            self.read(len(seqs))
            self.ack(self.unacked())
        self.where = 'close'
        self.close()


def main(argv):
    inline_setup = argv == ['--inline-setup']
    if argv and not inline_setup:
        print(f'driver.py: unknown arguments {argv} (the only option is --inline-setup)', file=sys.stderr)
        return EXIT_USAGE
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            spec = parse_spec(line, inline_setup)
        except SpecError as e:
            print(f'driver.py: spec on stdin: {e}', file=sys.stderr)
            return EXIT_USAGE
        out = Out(spec.get('mark'))
        hello = {'t': 'hello', 'protocol': 1, 'target': 'minidb-queue', 'contract': CONTRACT, 'serves': True}
        if not inline_setup:
            hello['setup'] = True
        out.emit(**hello)
        run = Run(spec, out, inline_setup)
        try:
            run.run()
        except Exception as e:  # noqa: BLE001 - the database failed: say where, exit 3
            out.emit(t='error', where=run.where, message=f'{type(e).__name__}: {e}')
            return EXIT_ERROR
        out.emit(t='done')
    return EXIT_OK


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
