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


class FileStore:
    """Segment bytes in a ``.log`` file, kept open for appends and preads."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size

    @property
    def size(self) -> int:
        return self._size

    def append(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:  # a regular file rarely writes short, but it is allowed to
            written = os.write(self._fd, view)
            self._size += written
            view = view[written:]

    def read(self, pos: int, n: int) -> bytes:
        return os.pread(self._fd, n, pos)

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self._size = size

    def replace(self, data: bytes) -> None:
        """Swap in new contents atomically: a crash leaves either the old or the new file."""
        write_atomically(self.path, data)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        self._size = len(data)

    def mtime_ms(self) -> int:
        return int(os.fstat(self._fd).st_mtime * 1000)

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

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
