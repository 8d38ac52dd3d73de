"""Where a segment's bytes live: a file in the partition directory, or a bytearray.

This is the only module of the log that touches the file system for segment data, so
the rest of the package (indexes, segments, retention, compaction) is plain logic that
runs the same whether the partition is on disk or held in memory (``directory=None``).

Appends go straight to the OS with ``os.write`` (Kafka writes to the page cache and
leaves flushing to the OS; ``flush()`` is the explicit fsync). Reads use ``os.pread``,
which needs no shared file position and so no locking between readers.
"""

from __future__ import annotations

import os
import pathlib
import resource
import threading
from collections import OrderedDict


class MemoryStore:
    """Segment bytes held in a bytearray (in-memory partitions, tests, notebooks)."""

    path: pathlib.Path | None = None

    def __init__(self, data: bytes = b""):
        self._buf = bytearray(data)

    @property
    def size(self) -> int:
        return len(self._buf)

    def append(self, data: bytes | memoryview) -> None:
        self._buf += data

    def read(self, pos: int, n: int) -> bytes:
        # One copy, straight out of the bytearray; the view is released at once so the
        # bytearray can still grow.
        with memoryview(self._buf) as view:
            return view[pos : pos + n].tobytes()

    def truncate(self, size: int) -> None:
        del self._buf[size:]

    def replace(self, data: bytes) -> None:
        self._buf = bytearray(data)

    def mtime_ms(self) -> int:
        return -1

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self._buf = bytearray()


class OpenFiles:
    """The segment files a process keeps open, at most ``limit`` at once.

    Kafka keeps one descriptor per segment and asks operators to raise ``ulimit -n``;
    a laptop's default (often 1024) would stop a broker at a thousand partitions. Here
    the least recently used file is closed when the limit is reached and reopened when
    it is next read or written, so partitions are bounded by disk, not descriptors.
    """

    def __init__(self, limit: int | None = None):
        self.limit = limit or default_limit()
        self._open: OrderedDict[FileStore, int] = OrderedDict()
        self._lock = threading.Lock()

    def fd(self, store: FileStore) -> int:
        with self._lock:
            fd = self._open.get(store)
            if fd is not None:
                self._open.move_to_end(store)
                return fd
            while len(self._open) >= self.limit:
                _, old = self._open.popitem(last=False)
                os.close(old)
            # Only the first open may create the file: a store whose file was deleted must
            # fail, not bring back an empty segment.
            create = 0 if store.opened else os.O_CREAT
            fd = os.open(store.path, os.O_RDWR | os.O_APPEND | create, 0o644)
            store.opened = True
            self._open[store] = fd
            return fd

    def close(self, store: FileStore) -> None:
        with self._lock:
            fd = self._open.pop(store, None)
            if fd is not None:
                os.close(fd)

    def __len__(self) -> int:
        return len(self._open)


def default_limit() -> int:
    """Half the process's descriptor limit, leaving the rest to sockets and index files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft // 2))


OPEN_FILES = OpenFiles()


class FileStore:
    """Segment bytes in a ``.log`` file, opened on demand through ``OPEN_FILES``."""

    def __init__(self, path: pathlib.Path, files: OpenFiles | None = None):
        self.path = path
        self.opened = False
        self._files = OPEN_FILES if files is None else files
        self._size = os.fstat(self._fd).st_size

    @property
    def _fd(self) -> int:
        return self._files.fd(self)

    @property
    def size(self) -> int:
        return self._size

    def append(self, data: bytes | memoryview) -> None:
        """Append all of ``data`` or nothing: a write the disk refuses halfway (full,
        over quota, too large) is cut off again, so the file ends at a whole batch."""
        view = memoryview(data)
        fd, before = self._fd, self._size
        try:
            while view:  # a regular file rarely writes short, but it is allowed to
                written = os.write(fd, view)
                self._size += written
                view = view[written:]
        except OSError:
            if self._size != before:
                os.ftruncate(fd, before)
                self._size = before
            raise

    def read(self, pos: int, n: int) -> bytes:
        return os.pread(self._fd, n, pos)

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self._size = size

    def replace(self, data: bytes) -> None:
        """Swap in new contents atomically: a crash leaves either the old or the new file."""
        write_atomically(self.path, data)
        self._files.close(self)  # the next use opens the new file
        self._size = len(data)

    def mtime_ms(self) -> int:
        return int(os.fstat(self._fd).st_mtime * 1000)

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        self._files.close(self)

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


def write_atomically(path: pathlib.Path, data: bytes) -> None:
    """Write ``path`` through a temporary sibling and a rename."""
    tmp = path.with_name(path.name + ".cleaned")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_if_exists(path: pathlib.Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
