"""minidb: a small database engine whose data directory must be initialised before it can start,
as PostgreSQL's must (initdb), with a queue table kept in its write-ahead log.

  initdb(folder)            makes a data directory: a version file, a control file, a catalog of
                            40 files, 240 relation files, a preallocated WAL segment, a commit log
                            and two config files (about 290 files), each written and fsynced, then
                            each directory fsynced; the control file last, so an interrupted initdb
                            leaves a folder the engine refuses to start on.
  Database(folder)          starts the engine on an initialised directory: refuses one without a
                            control file or with a damaged catalog, then recovers the queue by
                            replaying its WAL (records with a CRC each; the first bad one ends it).
  db.insert(data) -> seq    commits a row: a WAL record appended, then (synchronous_commit) the
                            WAL fdatasynced before the commit returns.
  db.ack_upto(seq)          commits the queue's watermark (every row below seq is consumed).
  db.checkpoint()           flushes the WAL and records where it ends in the control file.

synchronous_commit=False is PostgreSQL's `synchronous_commit = off`: a commit returns before its
WAL record is flushed; a background WAL writer flushes every WAL_WRITER_DELAY_S. A power cut then
loses commits the caller was told about.
"""
import os
import struct
import threading
import time
import zlib

WAL_SEGMENT = os.path.join('pg_wal', '000000010000000000000001')
CONTROL = os.path.join('global', 'pg_control')
CATALOG_FILES = 40
RELATION_FILES = 240
PAGE_BYTES = 1024
WAL_SEGMENT_BYTES = 64 * 1024
WAL_WRITER_DELAY_S = 0.2
CONTROL_MAGIC = 0x6D696E69  # 'mini'
RECORD = struct.Struct('<BIII')  # kind, seq (or watermark), length, crc32 of header fields and data
INSERT, ACK = 1, 2


class NotInitialised(Exception):
    pass


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path, data, sync=True):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def page(name, k):
    """A catalog or relation page: its name, a counter, filler, and a CRC over them in the last 4 bytes."""
    body = (f'{name}:{k}:'.encode() * PAGE_BYTES)[:PAGE_BYTES - 4]
    return body + struct.pack('<I', zlib.crc32(body))


def control_bytes(wal_end):
    body = struct.pack('<IQ', CONTROL_MAGIC, wal_end)
    return body + struct.pack('<I', zlib.crc32(body))


def initdb(folder):
    """Makes an initialised data directory in `folder` (which must be empty)."""
    if os.listdir(folder):
        raise FileExistsError(f'initdb: {folder} is not empty')
    for d in ('global', 'base', os.path.join('base', '1'), 'pg_wal', 'pg_xact'):
        os.mkdir(os.path.join(folder, d), 0o700)
    write_file(os.path.join(folder, 'PG_VERSION'), b'1\n')
    write_file(os.path.join(folder, 'postgresql.conf'), b'synchronous_commit = on\n', sync=False)
    write_file(os.path.join(folder, 'pg_hba.conf'), b'local all all trust\n', sync=False)
    for k in range(CATALOG_FILES):
        write_file(os.path.join(folder, 'global', f'{1200 + k}'), page('global', k))
    for k in range(RELATION_FILES):
        write_file(os.path.join(folder, 'base', '1', f'{2600 + k}'), page('base/1', k))
    write_file(os.path.join(folder, 'pg_xact', '0000'), bytes(8192))
    write_file(os.path.join(folder, WAL_SEGMENT), bytes(WAL_SEGMENT_BYTES))
    for d in ('global', os.path.join('base', '1'), 'base', 'pg_wal', 'pg_xact', '.'):
        fsync_dir(os.path.join(folder, d))
    # Last: only a complete directory has a control file.
    write_file(os.path.join(folder, CONTROL), control_bytes(0))
    fsync_dir(os.path.join(folder, 'global'))


class Database:
    def __init__(self, folder, synchronous_commit=True):
        self.folder = folder
        self.synchronous_commit = synchronous_commit
        self.check_directory()
        self.wal = os.open(os.path.join(folder, WAL_SEGMENT), os.O_RDWR)
        self.lock = threading.Lock()
        self.rows = {}  # seq -> data, rows not yet consumed
        self.watermark = 1  # every seq below it is consumed
        self.last_seq = 0
        self.wal_end = 0
        self.flushed_end = 0
        self.recover()
        self.closed = False
        self.writer = None
        if not synchronous_commit:
            self.writer = threading.Thread(target=self.wal_writer, daemon=True)
            self.writer.start()

    def check_directory(self):
        control = os.path.join(self.folder, CONTROL)
        if not os.path.exists(control):
            raise NotInitialised(f'{self.folder} is not an initialised data directory (no {CONTROL}): run initdb first')
        data = open(control, 'rb').read()
        if len(data) != 16 or struct.unpack_from('<I', data, 12)[0] != zlib.crc32(data[:12]) or struct.unpack_from('<I', data)[0] != CONTROL_MAGIC:
            raise NotInitialised(f'{control} is damaged')
        for k in range(CATALOG_FILES):
            p = open(os.path.join(self.folder, 'global', f'{1200 + k}'), 'rb').read()
            if len(p) != PAGE_BYTES or struct.unpack_from('<I', p, PAGE_BYTES - 4)[0] != zlib.crc32(p[:-4]):
                raise NotInitialised(f'catalog page global/{1200 + k} is damaged')

    def recover(self):
        data = os.pread(self.wal, os.fstat(self.wal).st_size, 0)
        at = 0
        while at + RECORD.size <= len(data):
            kind, value, length, crc = RECORD.unpack_from(data, at)
            body = data[at + RECORD.size: at + RECORD.size + length]
            if kind not in (INSERT, ACK) or len(body) != length or zlib.crc32(data[at:at + 9] + body) != crc:
                break
            if kind == INSERT:
                if value != self.last_seq + 1:
                    break
                self.last_seq = value
                self.rows[value] = body
            else:
                self.watermark = max(self.watermark, value)
            at += RECORD.size + length
        self.wal_end = self.flushed_end = at
        for seq in [s for s in self.rows if s < self.watermark]:
            del self.rows[seq]

    def append(self, kind, value, body=b''):
        header = struct.pack('<BII', kind, value, len(body))
        record = header + struct.pack('<I', zlib.crc32(header + body)) + body
        written = 0
        while written < len(record):  # a short write (a full disk) is retried, and raises ENOSPC
            written += os.pwrite(self.wal, record[written:], self.wal_end + written)
        self.wal_end += len(record)

    def flush(self):
        with self.lock:
            end = self.wal_end
        if end > self.flushed_end:
            os.fdatasync(self.wal)
            self.flushed_end = max(self.flushed_end, end)

    def commit(self):
        if self.synchronous_commit:
            self.flush()

    def insert(self, data):
        with self.lock:
            seq = self.last_seq + 1
            self.append(INSERT, seq, data)
            self.last_seq = seq
            self.rows[seq] = data
        self.commit()
        return seq

    def ack_upto(self, watermark):
        with self.lock:
            if watermark <= self.watermark:
                return
            self.append(ACK, watermark)
            for seq in range(self.watermark, watermark):
                self.rows.pop(seq, None)
            self.watermark = watermark
        self.commit()

    def rows_from(self, seq):
        with self.lock:
            return sorted((s, d) for s, d in self.rows.items() if s >= seq)

    def checkpoint(self):
        self.flush()
        control = os.path.join(self.folder, CONTROL)
        write_file(control + '.tmp', control_bytes(self.flushed_end))
        os.rename(control + '.tmp', control)
        fsync_dir(os.path.join(self.folder, 'global'))

    def wal_writer(self):
        while not self.closed:
            time.sleep(WAL_WRITER_DELAY_S)
            if not self.closed:
                self.flush()

    def close(self):
        self.closed = True
        if self.writer:
            self.writer.join(timeout=5)
        self.flush()
        os.close(self.wal)
