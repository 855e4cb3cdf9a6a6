"""pqueue: a deliberately small file-backed FIFO queue, written to be read (and put under powercut).

On disk, in one directory:

  data  records appended one after another, never rewritten:
          seq (u64 LE) | length (u32 LE) | data (length bytes) | crc32 of the three before (u32 LE)
  ack   the first unacked seq, as decimal text; replaced atomically, never written in place

Durability rules (each is one line below, and each is a bug when left out):
  * A write is durable once the data file was fsynced after it (wait_durable; group commit).
  * A new file's name is durable once its directory was fsynced: right after creating `data`,
    and after every rename of `ack.tmp` over `ack` (the first one creates the name `ack`).
  * An ack is replaced as: write ack.tmp, fsync ack.tmp, rename it over ack, fsync the directory.
    Records are made durable before an ack covering them, so a lost record's seq is never below
    a durable ack.
  * Acks are in order: an ack above a gap (a lower delivered seq still unacked) waits in memory
    until the gap is acked; every ack call that moves the first unacked seq is durable on return.
  * Recovery keeps the records up to the first bad one (wrong seq, torn length, bad CRC), cuts the
    torn tail off (and fsyncs the cut) before any new write, and continues the seqs after the last
    good record (or after the durable ack, if that is higher): a seq is never handed out twice.

With preallocate_bytes (as write-ahead logs do: etcd's 64 MB segments), the data file is extended
by ftruncate to a multiple of it ahead of the records, so an append changes no size; the zeros past
the last record read as "no record here". Recovery then cuts the tail by truncating to the last
good record and extending again, which zeroes whatever a torn append left, without reading it.
"""
import os
import struct
import threading
import zlib

HEADER = struct.Struct('<QI')  # seq, length
TRAILER = struct.Struct('<I')  # crc32 of header + data
MAX_EVENT_BYTES = 1 << 20
SCAN_BYTES = 1 << 20  # recovery reads this much at a time, and stops at the first bad record
DATA, ACK, ACK_TMP = 'data', 'ack', 'ack.tmp'


class QueueError(Exception):
    """The queue's files are not readable as a queue: fail loudly rather than guess."""


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Queue:
    """Thread-safe: several writers, a reader and an acker may call it at once.

    on_durable(durable_seq, first_unacked), if set, is called whenever either number advances,
    after the fsync that made it so and before the queue touches the disk again.
    """

    def __init__(self, directory, dir_fsync_after_ack_rename=True, preallocate_bytes=0):
        self.dir = directory
        self._preallocate = preallocate_bytes  # 0: the file grows with its records
        self.on_durable = None
        self._dir_fsync_after_ack_rename = dir_fsync_after_ack_rename  # False: the known-bad flag
        self._lock = threading.Lock()  # records, index and counters
        self._appended = threading.Condition(self._lock)
        self._ack_lock = threading.Lock()  # one ack file replacement at a time
        self._recover()

    # ---- recovery -------------------------------------------------------------------------

    def _recover(self):
        path = os.path.join(self.dir, DATA)
        created = not os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if created:
            fsync_dir(self.dir)  # the name `data` itself must survive a power cut
        self._index = {}  # seq -> (offset of data, length)
        pos = last = 0
        with open(path, 'rb') as f:
            buf, eof = bytearray(), False

            def fill(need):  # reads on until buf holds `need` bytes or the file ends
                nonlocal eof
                while len(buf) < need and not eof:
                    want = max(SCAN_BYTES, need - len(buf))
                    more = f.read(want)
                    eof = len(more) < want  # a buffered read comes back short only at the end
                    buf.extend(more)

            while True:
                fill(pos + HEADER.size)
                if pos + HEADER.size > len(buf):
                    break
                seq, length = HEADER.unpack_from(buf, pos)
                end = pos + HEADER.size + length + TRAILER.size
                if seq != last + 1 or length > MAX_EVENT_BYTES:
                    break  # zeros or garbage where a record should start
                fill(end)
                if end > len(buf):
                    break  # a torn record
                (crc,) = TRAILER.unpack_from(buf, end - TRAILER.size)
                if crc != zlib.crc32(buf[pos:end - TRAILER.size]):
                    break  # a record written in part
                self._index[seq] = (pos + HEADER.size, length)
                last, pos = seq, end
        if pos < len(buf) or not eof:
            os.ftruncate(self._fd, pos)  # the torn tail goes before any new record lands after it
        self._allocated = pos
        self._reserve(pos)  # preallocating: the cut tail comes back as zeros
        os.fsync(self._fd)  # what we report durable below really is
        self._end = pos
        self._first_unacked = self._read_ack()
        self._last_seq = last
        self._next_seq = max(last, self._first_unacked - 1) + 1  # never reuse a seq
        self._durable_seq = last
        self._read_next = self._first_unacked  # next seq to deliver
        self._acked = set()  # acked in this session, above the first unacked seq (a gap below)
        self._closed = False

    def _reserve(self, end):
        """Preallocating: extends the file by ftruncate to the next multiple of preallocate_bytes at or past end."""
        if self._preallocate and end >= self._allocated:
            self._allocated = (end // self._preallocate + 1) * self._preallocate
            os.ftruncate(self._fd, self._allocated)  # made durable by the next fsync, with the records

    def _read_ack(self):
        try:
            with open(os.path.join(self.dir, ACK), 'rb') as f:
                text = f.read()
        except FileNotFoundError:
            return 1
        try:
            value = int(text)
        except ValueError:
            raise QueueError(f'{self.dir}/{ACK}: not a seq: {text[:40]!r}') from None
        if value < 1:
            raise QueueError(f'{self.dir}/{ACK}: first unacked seq {value} < 1')
        return value

    # ---- the API ------------------------------------------------------------------------------

    def durability(self):
        with self._lock:
            return self._durable_seq, self._first_unacked

    def write(self, data):
        """Appends one event; returns its seq. Not durable yet: see wait_durable."""
        if len(data) > MAX_EVENT_BYTES:
            raise ValueError(f'event of {len(data)} bytes > {MAX_EVENT_BYTES}')
        with self._lock:
            seq = self._next_seq
            record = HEADER.pack(seq, len(data)) + data
            record += TRAILER.pack(zlib.crc32(record))
            self._reserve(self._end + len(record))
            done = 0
            while done < len(record):
                done += os.pwrite(self._fd, record[done:], self._end + done)
            self._index[seq] = (self._end + HEADER.size, len(data))
            self._end += len(record)
            self._last_seq, self._next_seq = seq, seq + 1
            self._appended.notify_all()
            return seq

    def wait_durable(self, seq):
        """Returns once every seq <= seq is durable. Concurrent callers share fsyncs (group commit)."""
        while self._durable_seq < seq:
            self._sync()

    def _sync(self):
        with self._lock:
            target = self._last_seq  # every record up to it is already in the file
        os.fsync(self._fd)  # outside the lock: other writers append while it runs
        with self._lock:
            if target > self._durable_seq:
                self._durable_seq = target
                self._notify()

    def read(self, max_events, timeout_s=0.0):
        """Up to max_events undelivered events in seq order, as (seq, bytes); waits up to timeout_s for the first."""
        with self._lock:
            if self._read_next > self._last_seq and timeout_s > 0:
                self._appended.wait_for(lambda: self._read_next <= self._last_seq, timeout_s)
            seqs = []
            while len(seqs) < max_events and self._read_next <= self._last_seq:
                if self._read_next in self._index:
                    seqs.append(self._read_next)
                self._read_next += 1
            places = [self._index[s] for s in seqs]
        return [(s, os.pread(self._fd, n, off)) for s, (off, n) in zip(seqs, places)]

    def ack(self, seqs):
        """Acks delivered events. Durable on return, unless above a gap (then once the gap is acked)."""
        with self._ack_lock:
            with self._lock:
                self._acked.update(s for s in seqs if s >= self._first_unacked)
                first = self._first_unacked
                while first in self._acked:
                    self._acked.remove(first)
                    first += 1
            if first == self._first_unacked:
                return  # above a gap: waits in memory (outOfOrderAcksDurable: false)
            self.wait_durable(first - 1)  # records before their ack
            self._write_ack_file(first)
            with self._lock:
                self._first_unacked = first
                self._notify()

    def _write_ack_file(self, first_unacked):
        tmp = os.path.join(self.dir, ACK_TMP)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            data = b'%d\n' % first_unacked
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
            os.fsync(fd)  # the new contents, before the name points at them
        finally:
            os.close(fd)
        os.rename(tmp, os.path.join(self.dir, ACK))
        if self._dir_fsync_after_ack_rename:
            fsync_dir(self.dir)  # the rename itself: without it the old ack file comes back

    def checkpoint(self):
        """Makes every write so far durable (in-order acks already are)."""
        self.wait_durable(self._last_seq)

    def close(self):
        if self._closed:
            return
        self.checkpoint()
        os.close(self._fd)
        self._closed = True

    def _notify(self):  # called with self._lock held, so the lines come out in order
        if self.on_durable is not None:
            self.on_durable(self._durable_seq, self._first_unacked)
