#!/usr/bin/env python3
"""The powercut driver for pqueue and jobqueue: the driver protocol of docs/driver-protocol.md, in Python.

Reads specs from stdin (one JSON object a line) and serves them in turn until stdin closes. Each
run prints its hello line first, then one JSON line for everything the queue told it, each written
whole with os.write (no buffer to flush) BEFORE the next filesystem call; with "mark" in the spec it
stats <mark>/<N> right after printing its Nth line. Exit codes: 0 done, 3 after an error line,
2 for a spec it cannot read (or an unknown option).

  python3 driver.py [--queue log|jobs] [--declare-defaults] [--preallocate BYTES] [KNOWN-BAD FLAG]

--queue log (the default) drives pqueue, an append-only log; --queue jobs drives jobqueue, a work
queue of one file per job whose contract differs from the defaults (see CONTRACTS below).
--preallocate BYTES (log): extends the data file by ftruncate BYTES at a time ahead of its records,
as a write-ahead log preallocates its segments (67108864: etcd's 64 MB).
--declare-defaults declares only the replay bound, leaving the rest of the contract at its defaults:
for seeing what powercut reports when a queue promises less than it is judged by.

The known-bad flags break one durability rule each:
--no-dir-fsync-after-ack-rename (log): renames ack.tmp over ack but does not fsync the directory,
so after a power cut the old ack file comes back and acks it confirmed durable are delivered again
(powercut's bounded-replay check).
--no-dir-fsync-after-job-write (jobs): fsyncs a new job's file but not its directory, so a job
confirmed durable can vanish with its name (powercut's at-least-once check).
"""
import errno
import json
import os
import struct
import sys
import threading
import time
import zlib

sys.dont_write_bytecode = True  # keep the example folder clean
from jobqueue import JobQueue  # noqa: E402
from pqueue import MAX_EVENT_BYTES, Queue  # noqa: E402

PROTOCOL = 1
TARGET = 'python-queue'
# What each queue promises (docs/driver-protocol.md, "The contract").
CONTRACTS = {
    # Every ack call that moves the first unacked seq is durable when it returns (batch of 1); an
    # ack above a gap waits in memory until the gap is acked. One append-only log: a cut loses a
    # suffix of what was not synced, and seqs continue after the last record for the queue's life.
    'log': {
        'replayBound': {'ackBatchSize': 1, 'outOfOrderAcksDurable': False},
        'acksConfirmed': True,
        'unconfirmedWrites': 'suffix',
        'seqScope': 'forever',
        'deliveryOrder': 'seq',
    },
    # Every ack deletes its job durably before it returns, in any order; jobs persist as they
    # complete (an unconfirmed job may be lost while a later one survives) and are handed out as
    # they become ready, and ids start again at 1 after a restart that finds no job.
    'jobs': {
        'replayBound': {'ackBatchSize': 1, 'outOfOrderAcksDurable': True},
        'acksConfirmed': True,
        'unconfirmedWrites': 'holes',
        'seqScope': 'session',
        'deliveryOrder': 'any',
    },
}
QUEUES = {  # name -> how to open it, given the options (its known-bad flag, preallocation)
    'log': lambda directory, o: Queue(directory, dir_fsync_after_ack_rename=not o.known_bad, preallocate_bytes=o.preallocate),
    'jobs': lambda directory, o: JobQueue(directory, skip_dir_fsync=o.known_bad),
}
PREALLOCATE_FLAG = '--preallocate'
BAD_FLAGS = {'log': '--no-dir-fsync-after-ack-rename', 'jobs': '--no-dir-fsync-after-job-write'}
DEFAULTS_FLAG = '--declare-defaults'
DRAIN_BATCH = 64
LIVENESS_SIZES = (64, 1500, 9)
LIVENESS_TIMEOUT_S = 2.0
EXIT_OK, EXIT_USAGE, EXIT_ERROR = 0, 2, 3


# ---- payloads: bytes 0-3 id, 4-7 size (u32 LE), byte i >= 8: ((id*131 + i*7) mod 255) + 1 ------

def payload(event_id, size):
    period = bytes(((event_id * 131 + i * 7) % 255) + 1 for i in range(255))  # byte i == period[i % 255]
    body = period * (size // 255 + 1)
    return struct.pack('<II', event_id, size) + body[8:size]


def summarize(data):
    event_id = struct.unpack_from('<I', data)[0] if len(data) >= 8 else None
    return (event_id or None), len(data), zlib.crc32(data)


# ---- the spec -------------------------------------------------------------------------------

class SpecError(Exception):
    pass


def is_count(value, low):
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


STEP_CHECKS = {  # op -> (is this step well formed?, what it must look like)
    'write': (lambda s: isinstance(s.get('sizesBytes'), list) and len(s['sizesBytes']) > 0
              and all(is_count(n, 8) and n <= MAX_EVENT_BYTES for n in s['sizesBytes']) and isinstance(s.get('waitDurable'), bool),
              f'sizesBytes (8..{MAX_EVENT_BYTES} each) and waitDurable'),
    'read': (lambda s: is_count(s.get('maxEvents'), 1) and is_count(s.get('waitMs', 0), 0), 'maxEvents >= 1, waitMs >= 0'),
    'ack': (lambda s: is_count(s.get('count'), 1) and s.get('order') in ('oldest', 'newest', 'every-other'),
            'count >= 1, order oldest|newest|every-other'),
    'waitDurable': (lambda s: True, ''),
    'checkpoint': (lambda s: True, ''),
    'reopen': (lambda s: True, ''),
    'concurrently': (lambda s: isinstance(s.get('branches'), list) and len(s['branches']) >= 2, 'at least 2 branches'),
}


def check_steps(steps, at, nested=False):
    if not isinstance(steps, list):
        raise SpecError(f'{at} must be an array of steps')
    for i, step in enumerate(steps):
        op = step.get('op') if isinstance(step, dict) else None
        if op not in STEP_CHECKS or (nested and op in ('reopen', 'concurrently')):
            raise SpecError(f'{at}[{i}]: unknown or misplaced op {op!r}')
        ok, shape = STEP_CHECKS[op]
        if not ok(step):
            raise SpecError(f'{at}[{i}] ({op}) needs {shape}')
        for j, branch in enumerate(step.get('branches', []) if op == 'concurrently' else []):
            check_steps(branch, f'{at}[{i}].branches[{j}]', True)


def parse_spec(text):
    try:
        spec = json.loads(text)
    except ValueError as e:
        raise SpecError(f'not JSON ({e})') from None
    if not isinstance(spec, dict):
        raise SpecError('a spec is a JSON object')
    if spec.get('mode') not in ('workload', 'drain'):
        raise SpecError(f'mode must be "workload" or "drain", got {spec.get("mode")!r}')
    if not isinstance(spec.get('dir'), str) or not spec['dir']:
        raise SpecError('dir must be a non-empty path')
    if not isinstance(spec.get('settings'), dict):
        raise SpecError('settings must be an object')
    if not is_count(spec.get('idBase'), 0):
        raise SpecError('idBase must be an integer >= 0')
    if 'mark' in spec and (not isinstance(spec['mark'], str) or not spec['mark']):
        raise SpecError('mark must be a non-empty path')
    if spec['mode'] == 'workload':
        workload = spec.get('workload')
        if not isinstance(workload, dict):
            raise SpecError('workload must be an object {"steps": [...]}')
        check_steps(workload.get('steps'), 'workload.steps')
    return spec


# ---- output: one whole line, then its marker, under one lock -------------------------------

class Out:
    def __init__(self, mark):
        self.mark = mark
        self.lines = 0
        self.lock = threading.Lock()
        self.ended = False  # after an error line, calls still in flight print nothing more

    def emit(self, **line):
        with self.lock:
            if not self.ended:
                self._print(line)

    def fail(self, where, exc):
        """Prints the error line (once) and ends the process with exit 3."""
        with self.lock:
            if not self.ended:
                line = {'t': 'error', 'where': where, 'message': f'{type(exc).__name__}: {exc}'}
                if isinstance(exc, OSError) and exc.errno in errno.errorcode:
                    line['code'] = errno.errorcode[exc.errno]
                self._print(line)
                self.ended = True
            os._exit(EXIT_ERROR)

    def _print(self, line):
        data = (json.dumps(line, separators=(',', ':')) + '\n').encode()
        while data:
            data = data[os.write(1, data):]
        self.lines += 1
        if self.mark:
            try:
                os.stat(f'{self.mark}/{self.lines}')  # the marker: recorded by powercut, always ENOENT
            except FileNotFoundError:
                pass


class Failed(Exception):
    def __init__(self, where, exc):
        super().__init__(where)
        self.where, self.exc = where, exc


def parallel(out, jobs):
    """Runs (where, fn) jobs in threads, all started before any finishes; returns their results."""
    results = [None] * len(jobs)

    def run(k, where, fn):
        try:
            results[k] = fn()
        except Failed as f:
            out.fail(f.where, f.exc)
        except BaseException as e:  # noqa: BLE001 - any failure ends the run loudly
            out.fail(where, e)

    threads = [threading.Thread(target=run, args=(k, w, fn)) for k, (w, fn) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# ---- one run --------------------------------------------------------------------------------

class Run:
    def __init__(self, spec, out, options):
        self.spec, self.out, self.options = spec, out, options
        self.queue = None
        self.lock = threading.Lock()  # next_id, last_seq, unacked
        self.read_lock = threading.Lock()  # one reader at a time: delivered lines stay in seq order
        self.next_id = spec['idBase']
        self.last_seq = 0
        self.unacked = []  # delivered in this session and not acked, ascending
        self.where = 'open'  # for the error line

    def open(self):
        self.queue = QUEUES[self.options.queue](self.spec['dir'], self.options)
        durable_seq, first_unacked = self.queue.durability()
        self.out.emit(t='open', durableSeq=durable_seq, durableFirstUnackedSeq=first_unacked)
        self.queue.on_durable = lambda d, f: self.out.emit(t='durable', durableSeq=d, durableFirstUnackedSeq=f)
        self.unacked = []

    def close(self):
        self.out.emit(t='close-intent')
        self.queue.on_durable = None
        self.queue.close()
        self.out.emit(t='closed')

    def write_one(self, event_id, size, wait):
        self.out.emit(t='write-intent', id=event_id, size=size)
        seq = self.queue.write(payload(event_id, size))
        self.out.emit(t='written', id=event_id, seq=seq)
        with self.lock:
            self.last_seq = max(self.last_seq, seq)
        if wait:
            self.queue.wait_durable(seq)
            self.out.emit(t='waited', seq=seq)
        return seq

    def write(self, sizes, wait, where):
        with self.lock:  # ids in array order, whatever order the writers run in
            first = self.next_id + 1
            self.next_id += len(sizes)
        if len(sizes) == 1:
            return [self.write_one(first, sizes[0], wait)]
        return parallel(self.out, [(where, lambda k=k, s=s: self.write_one(first + k, s, wait)) for k, s in enumerate(sizes)])

    def read(self, max_events, timeout_s):
        with self.read_lock:
            events = self.queue.read(max_events, timeout_s)
            for seq, data in events:
                event_id, size, crc = summarize(data)
                self.out.emit(t='delivered', seq=seq, id=event_id, size=size, crc=crc)
                with self.lock:
                    self.unacked.append(seq)
                    self.unacked.sort()
        return len(events)

    def ack(self, seqs):
        if not seqs:
            return
        with self.lock:  # off the list before the call: a concurrent ack step must not ack them again
            self.unacked = [s for s in self.unacked if s not in seqs]
        self.out.emit(t='ack-intent', seqs=seqs)
        self.queue.ack(seqs)
        self.out.emit(t='acked', seqs=seqs)

    def pick_acks(self, count, order):
        with self.lock:
            u = self.unacked
            if order == 'oldest':
                return u[:count]
            if order == 'newest':
                return u[::-1][:count]
            return u[::2][:count]  # every-other

    def steps(self, steps, prefix):
        for i, step in enumerate(steps):
            where = f'{prefix}[{i}] ({step["op"]})'
            try:
                self.step(step, f'{prefix}[{i}]')
            except Failed:
                raise
            except Exception as e:  # noqa: BLE001
                raise Failed(where, e) from e

    def step(self, step, where):
        op = step['op']
        if op == 'write':
            self.write(step['sizesBytes'], step['waitDurable'], where)
        elif op == 'waitDurable':
            with self.lock:
                seq = self.last_seq
            if seq:
                self.queue.wait_durable(seq)
                self.out.emit(t='waited', seq=seq)
        elif op == 'read':
            self.read(step['maxEvents'], step.get('waitMs', 0) / 1000)
        elif op == 'ack':
            self.ack(self.pick_acks(step['count'], step['order']))
        elif op == 'checkpoint':
            self.out.emit(t='checkpoint-intent')
            self.queue.checkpoint()
            self.out.emit(t='checkpointed')
        elif op == 'reopen':
            self.close()
            self.open()
        elif op == 'concurrently':
            branches = step['branches']
            parallel(self.out, [(f'{where}.branches[{j}]', lambda b=b, j=j: self.steps(b, f'{where}.branches[{j}]'))
                                for j, b in enumerate(branches)])

    def workload(self):
        self.where = 'open'
        self.open()
        self.steps(self.spec['workload']['steps'], 'steps')
        self.where = 'close'
        self.close()

    def drain(self):
        self.where = 'open'
        self.open()
        self.where = 'drain'
        count = 0
        while n := self.read(DRAIN_BATCH, 0):
            count += n
            self.ack(list(self.unacked))
        self.out.emit(t='drained', count=count)
        # Liveness: the recovered queue takes new writes and delivers them back.
        self.where = 'liveness write'
        seqs = self.write([min(n, MAX_EVENT_BYTES) for n in LIVENESS_SIZES], False, self.where)
        self.queue.wait_durable(max(seqs))
        self.out.emit(t='waited', seq=max(seqs))
        self.where = 'liveness read'
        deadline = time.monotonic() + LIVENESS_TIMEOUT_S
        got = 0
        while got < len(seqs) and time.monotonic() < deadline:
            got += self.read(DRAIN_BATCH, max(0.001, deadline - time.monotonic()))
        self.ack(list(self.unacked))
        self.where = 'close'
        self.close()


def run_spec(spec, options):
    out = Out(spec.get('mark'))
    contract = CONTRACTS[options.queue]
    if options.declare_defaults:
        contract = {'replayBound': contract['replayBound']}
    out.emit(t='hello', protocol=PROTOCOL, target=TARGET if options.queue == 'log' else 'python-jobqueue', contract=contract, serves=True)
    run = Run(spec, out, options)
    try:
        run.workload() if spec['mode'] == 'workload' else run.drain()
    except Failed as f:
        out.fail(f.where, f.exc)  # exits 3
    except Exception as e:  # noqa: BLE001 - the queue failed outside a step
        out.fail(run.where, e)
    out.emit(t='done')


class Options:
    def __init__(self, argv):
        args = list(argv)
        self.queue = 'log'
        if '--queue' in args:
            at = args.index('--queue')
            if at + 1 >= len(args) or args[at + 1] not in QUEUES:
                raise SpecError(f'--queue takes one of {", ".join(QUEUES)}')
            self.queue = args[at + 1]
            del args[at:at + 2]
        self.preallocate = 0
        if PREALLOCATE_FLAG in args:
            at = args.index(PREALLOCATE_FLAG)
            value = args[at + 1] if at + 1 < len(args) else ''
            if self.queue != 'log' or not value.isdigit() or int(value) < 1:
                raise SpecError(f'{PREALLOCATE_FLAG} takes a byte count >= 1, for --queue log only (got {value!r} with --queue {self.queue})')
            self.preallocate = int(value)
            del args[at:at + 2]
        self.declare_defaults = DEFAULTS_FLAG in args
        self.known_bad = BAD_FLAGS[self.queue] in args
        unknown = sorted(set(args) - {DEFAULTS_FLAG, BAD_FLAGS[self.queue]})
        if unknown:
            raise SpecError(f'unknown option(s) {unknown} for --queue {self.queue}; usage: driver.py [--queue log|jobs] [{DEFAULTS_FLAG}] [{PREALLOCATE_FLAG} BYTES] [{BAD_FLAGS[self.queue]}]')


def main(argv):
    try:
        options = Options(argv)
    except SpecError as e:
        print(f'driver: {e}', file=sys.stderr)
        return EXIT_USAGE
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return EXIT_OK
        if not line.strip():
            continue
        try:
            spec = parse_spec(line)
        except SpecError as e:
            print(f'driver: spec on stdin: {e}', file=sys.stderr)
            return EXIT_USAGE
        run_spec(spec, options)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
