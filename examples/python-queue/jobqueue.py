"""jobqueue: a work queue of one file per job, written to be read (and put under powercut).

It behaves like many job servers, and unlike a log in two ways that its contract declares:

  * Ids are assigned when a request arrives and every request is persisted as it completes, in
    its own thread: job 3 can reach the disk before job 2, so a power cut may lose an unconfirmed
    job 2 while job 3 survives ("unconfirmedWrites": "holes").
  * Ids are numbered per session: an open continues after the highest job it finds, or starts at
    1 again when it finds none, so an id is reused once every job was acked ("seqScope": "session").

On disk, in one directory, one file per job that is neither acked nor lost:

  job.<id>  id (u64 LE) | length (u32 LE) | data (length bytes) | crc32 of the three before (u32 LE)

Durability rules (each is one line below, and each is a bug when left out):
  * A job is durable once its file was fsynced and then its directory: write() returns after both,
    and durableSeq is the highest id up to which every job of the session is durable.
  * An ack deletes the job's file and fsyncs the directory before it returns: acked jobs never
    come back, in or out of order ("outOfOrderAcksDurable": true, "ackBatchSize": 1).
  * Recovery keeps the valid job files, deletes torn ones (a wrong id, a short file, a bad CRC) and
    fsyncs the directory before anything else.
"""
import os
import struct
import threading
import zlib

from pqueue import MAX_EVENT_BYTES, QueueError, fsync_dir

HEADER = struct.Struct('<QI')  # id, length
TRAILER = struct.Struct('<I')  # crc32 of header + data
PREFIX = 'job.'


def job_path(directory, job_id):
    return os.path.join(directory, f'{PREFIX}{job_id}')


class JobQueue:
    """Thread-safe, with the same calls as pqueue.Queue, so the driver runs either."""

    def __init__(self, directory, skip_dir_fsync=False):
        self.dir = directory
        self.on_durable = None
        self._skip_dir_fsync = skip_dir_fsync  # True: the known-bad flag
        self._lock = threading.Lock()
        self._written = threading.Condition(self._lock)
        self._jobs = self._recover()  # id -> length of its data, for every job held and not acked
        self._next_id = max(self._jobs, default=0) + 1  # 1 again when nothing was found: by design
        self._durable = set()  # ids of this session whose file and name are durable
        self._inflight = set()  # ids handed out whose write has not returned
        self._durable_seq = max(self._jobs, default=0)
        self._delivered = set()
        self._closed = False

    def _recover(self):
        jobs, torn = {}, []
        for name in os.listdir(self.dir):
            if not name.startswith(PREFIX):
                continue
            try:
                job_id = int(name[len(PREFIX):])
            except ValueError:
                raise QueueError(f'{self.dir}/{name}: not a job file name') from None
            with open(os.path.join(self.dir, name), 'rb') as f:
                buf = f.read()
            if self._valid(buf, job_id):
                jobs[job_id] = HEADER.unpack_from(buf)[1]
            else:
                torn.append(name)  # written in part before a power cut: it was never confirmed
        for name in torn:
            os.unlink(os.path.join(self.dir, name))
        fsync_dir(self.dir)  # what open reports below is what a later cut leaves
        return jobs

    @staticmethod
    def _valid(buf, job_id):
        if len(buf) < HEADER.size + TRAILER.size:
            return False
        stored_id, length = HEADER.unpack_from(buf)
        end = HEADER.size + length
        if stored_id != job_id or end + TRAILER.size != len(buf):
            return False
        return TRAILER.unpack_from(buf, end)[0] == zlib.crc32(buf[:end])

    # ---- the API ------------------------------------------------------------------------------

    def durability(self):
        with self._lock:
            return self._durable_seq, self._first_unacked()

    def _first_unacked(self):
        # An id handed out and still being written counts: the first unacked seq never goes back.
        return min(self._jobs.keys() | self._inflight, default=self._next_id)

    def write(self, data):
        """Persists one job, in the caller's thread, and returns its id once it is durable."""
        if len(data) > MAX_EVENT_BYTES:
            raise ValueError(f'event of {len(data)} bytes > {MAX_EVENT_BYTES}')
        with self._lock:
            job_id = self._next_id  # assigned on arrival: a later job may reach the disk first
            self._next_id += 1
            self._inflight.add(job_id)
        record = HEADER.pack(job_id, len(data)) + data
        record += TRAILER.pack(zlib.crc32(record))
        fd = os.open(job_path(self.dir, job_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            done = 0
            while done < len(record):
                done += os.write(fd, record[done:])
            os.fsync(fd)  # the job's bytes
        finally:
            os.close(fd)
        if not self._skip_dir_fsync:
            fsync_dir(self.dir)  # the job's name
        with self._lock:
            self._inflight.discard(job_id)
            self._jobs[job_id] = len(data)
            self._durable.add(job_id)
            advanced = False
            while self._durable_seq + 1 in self._durable:
                self._durable_seq += 1
                advanced = True
            if advanced:
                self._notify()
            self._written.notify_all()
        return job_id

    def wait_durable(self, seq):
        """Returns once every job of this session up to `seq` is durable (each write makes its own so)."""
        with self._lock:
            self._written.wait_for(lambda: self._durable_seq >= seq)

    def read(self, max_events, timeout_s=0.0):
        """Up to max_events undelivered jobs in id order, as (id, bytes); waits up to timeout_s for the first."""
        ready = lambda: [j for j in sorted(self._jobs) if j not in self._delivered]  # noqa: E731
        with self._lock:
            if not ready() and timeout_s > 0:
                self._written.wait_for(lambda: bool(ready()), timeout_s)
            ids = ready()[:max_events]
            self._delivered.update(ids)
        out = []
        for job_id in ids:
            with open(job_path(self.dir, job_id), 'rb') as f:
                buf = f.read()
            out.append((job_id, buf[HEADER.size:len(buf) - TRAILER.size]))
        return out

    def ack(self, ids):
        """Deletes the jobs; durable on return, in any order."""
        for job_id in ids:
            os.unlink(job_path(self.dir, job_id))
        fsync_dir(self.dir)  # the deletions
        with self._lock:
            before = self._first_unacked()
            for job_id in ids:
                self._jobs.pop(job_id, None)
            if self._first_unacked() != before:
                self._notify()

    def checkpoint(self):
        """Every returned write is durable already: nothing to do."""

    def close(self):
        self._closed = True

    def _notify(self):  # called with self._lock held, so the lines come out in order
        if self.on_durable is not None:
            self.on_durable(self._durable_seq, self._first_unacked())
