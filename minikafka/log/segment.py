"""A log segment: one file of a partition's log plus its offset and time indexes.

Kafka splits each partition's log into segments named by their *base offset* (the first
offset they may hold), zero-padded to 20 digits: ``00000000000000000000.log``. Only the
last, *active* segment is appended to; older ones are read, deleted whole by retention,
or rewritten by compaction. A segment is a sequence of record batches exactly as the
producers sent them (offsets patched), so serving a fetch is copying a byte range.

On open, a segment's metadata (next offset, largest timestamp, indexes) is recovered:
the active segment by scanning every batch and checking its CRC, cutting a torn or
corrupt tail (what a crash in the middle of a write leaves); older segments from their
index files when those look sound, otherwise by scanning.
"""

from __future__ import annotations

import logging
import pathlib
import struct
from collections.abc import Callable, Iterator

import crc32c

from ..records import (
    CRC_START,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    BatchHeader,
    CorruptRecordError,
    iter_records,
    validate,
)
from .index import OffsetIndex, TimeIndex
from .store import FileStore, MemoryStore, read_if_exists, write_atomically

log = logging.getLogger(__name__)

_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_AT = 23
_PEEK_SIZE = 27  # baseOffset .. lastOffsetDelta: enough to know which offsets a batch holds
_MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
_SCAN_CHUNK = 1 << 20


def file_name(base_offset: int, suffix: str = ".log") -> str:
    return f"{base_offset:020d}{suffix}"


def parse_base_offset(path: pathlib.Path) -> int | None:
    """The base offset a segment file is named after, or None if it is not one."""
    stem = path.name.split(".", 1)[0]
    return int(stem) if len(stem) == 20 and stem.isdigit() else None


def with_log_append_time(batch: bytes | memoryview, timestamp_ms: int) -> bytes:
    """Stamp a batch with the broker's clock (``message.timestamp.type=LogAppendTime``).

    The timestamp-type attribute bit and ``maxTimestamp`` are inside the CRC, so unlike
    the base offset this rewrite needs a new checksum.
    """
    buf = bytearray(batch)
    (attributes,) = struct.unpack_from(">h", buf, 21)
    struct.pack_into(">h", buf, 21, attributes | TIMESTAMP_TYPE_BIT)
    struct.pack_into(">q", buf, 35, timestamp_ms)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(memoryview(buf)[CRC_START:]))
    return bytes(buf)


def whole_batches_end(data: bytes, max_offset: int | None) -> int:
    """Length of the prefix of ``data`` made of whole batches with base offsets < max_offset."""
    pos, size = 0, len(data)
    while pos + LOG_OVERHEAD <= size:
        base_offset, length = _OFFSET_AND_LENGTH.unpack_from(data, pos)
        if max_offset is not None and base_offset >= max_offset:
            break
        if pos + length + LOG_OVERHEAD > size:
            break
        pos += length + LOG_OVERHEAD
    return pos


def _batch_size_at(data: bytes, pos: int) -> int:
    (length,) = _LAST_OFFSET_DELTA.unpack_from(data, pos + 8)
    if length < _MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"record batch length {length} is impossible")
    return length + LOG_OVERHEAD


def scan_batches(
    read: Callable[[int, int], bytes], end: int, pos: int = 0
) -> Iterator[tuple[int, memoryview]]:
    """Yield (position, batch bytes) for each whole batch in [pos, end), reading in chunks.

    Raises CorruptRecordError where the bytes stop making sense (an impossible length, a
    batch cut short by the end); every batch before that point has been yielded.
    """
    while pos < end:
        data = read(pos, min(_SCAN_CHUNK, end - pos))
        view, off = memoryview(data), 0
        while off + LOG_OVERHEAD <= len(data):
            size = _batch_size_at(data, off)
            if off + size > len(data):
                break
            yield pos + off, view[off : off + size]
            off += size
        if off == 0:  # the next batch is bigger than a chunk, or cut short by the end
            if len(data) < LOG_OVERHEAD or _batch_size_at(data, 0) > end - pos:
                raise CorruptRecordError(f"a partial batch of {end - pos} bytes ends the segment")
            data = read(pos, _batch_size_at(data, 0))
            yield pos, memoryview(data)
            off = len(data)
        pos += off


def _checked_header(view: memoryview, check_crc: bool) -> BatchHeader:
    if check_crc:
        return validate(view)
    header = BatchHeader.parse(view)
    if header.magic != 2:
        raise CorruptRecordError(f"record batch magic {header.magic} is not 2")
    return header


MAX_RELATIVE_OFFSET = 2**31 - 1  # index entries hold offsets relative to the base as int32


class Segment:
    """One segment of a partition log; ``store`` holds its bytes (file or memory)."""

    truncated_bytes = 0  # what recovery cut off a bad tail (0: the segment was sound)

    def __init__(self, base_offset: int, store: FileStore | MemoryStore, *, created_ms: int):
        self.base_offset = base_offset
        self.store = store
        self.created_ms = created_ms
        self._reset()

    def _reset(self) -> None:
        self.offset_index = OffsetIndex()
        self.time_index = TimeIndex()
        self.next_offset = self.base_offset  # last offset + 1
        self.max_timestamp = -1
        self.offset_of_max_timestamp = self.base_offset
        self.first_timestamp = -1  # the first batch's (max) timestamp: what segment.ms is measured from
        self._bytes_since_index = 0

    @classmethod
    def create(cls, directory: pathlib.Path | None, base_offset: int, now_ms: int) -> Segment:
        if directory is None:
            return cls(base_offset, MemoryStore(), created_ms=now_ms)
        segment = cls(base_offset, FileStore(directory / file_name(base_offset)), created_ms=now_ms)
        segment._remove_index_files()  # left over from an earlier segment with this base offset
        return segment

    @classmethod
    def open(cls, path: pathlib.Path, *, index_interval: int, active: bool) -> Segment:
        """Recover a segment file: see the module docstring."""
        store = FileStore(path)
        segment = cls(parse_base_offset(path) or 0, store, created_ms=store.mtime_ms())
        if active or not segment._load_indexes(index_interval):
            segment._rebuild(index_interval, check_crc=active)
        return segment

    # -- facts -------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.store.size

    @property
    def path(self) -> pathlib.Path | None:
        return self.store.path

    @property
    def last_offset(self) -> int:
        return self.next_offset - 1

    def largest_timestamp(self) -> int:
        """What time-based retention compares with; the file's age when batches have no timestamps."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.created_ms

    def age_ms(self, incoming_timestamp: int, now_ms: int) -> int:
        """How long this segment has been filling, as segment.ms measures it.

        Like Kafka, by record time (the incoming batch's timestamp minus the first
        batch's), so a replayed or replicated log rolls where the original did; by the
        clock only when the batches carry no timestamps.
        """
        if self.first_timestamp >= 0 and incoming_timestamp >= 0:
            return incoming_timestamp - self.first_timestamp
        return now_ms - self.created_ms

    def info(self) -> dict:
        return {
            "base_offset": self.base_offset,
            "size": self.size,
            "path": str(self.path) if self.path else None,
            "first_timestamp": self.first_timestamp,
            "last_offset": self.last_offset,
            "max_timestamp": self.max_timestamp,
            "index_entries": len(self.offset_index),
            "time_index_entries": len(self.time_index),
        }

    # -- writing -------------------------------------------------------------------------

    def append(self, batch: bytes | memoryview, header: BatchHeader, index_interval: int) -> None:
        position = self.store.size
        self.store.append(batch)
        self._track(header, position, index_interval)

    def _track(self, header: BatchHeader, position: int, index_interval: int) -> None:
        """Account for a batch now at ``position``: offsets, timestamps, sparse index entries."""
        if self._bytes_since_index >= index_interval:
            # The time entry describes the batches *before* this one, so a timestamp lookup
            # that lands on it may start scanning here.
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp - self.base_offset)
            self.offset_index.append(header.base_offset - self.base_offset, position)
            self._bytes_since_index = 0
        self._bytes_since_index += header.size
        if position == 0:
            self.first_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.base_offset
        self.next_offset = header.last_offset + 1

    def seal(self) -> None:
        """The segment stops being active: record its largest timestamp, persist the indexes."""
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp - self.base_offset)
        self.write_indexes()

    def write_indexes(self) -> None:
        if self.path is not None:
            write_atomically(self.path.with_suffix(".index"), self.offset_index.to_bytes())
            write_atomically(self.path.with_suffix(".timeindex"), self.time_index.to_bytes())

    def truncate(self, position: int, index_interval: int) -> None:
        """Cut the segment at a batch boundary (follower truncation)."""
        self._remove_index_files()
        self.store.truncate(position)
        self._rebuild(index_interval, check_crc=False)

    def replace(self, batches: list[bytes], index_interval: int) -> None:
        """Swap in compacted contents. The old index files go first: a crash before the new
        ones are written leaves a segment without indexes, which recovery rebuilds."""
        self._remove_index_files()
        self.store.replace(b"".join(batches))
        self._rebuild(index_interval, check_crc=False)
        self.seal()

    def delete(self) -> None:
        self.store.delete()
        self._remove_index_files()

    def _remove_index_files(self) -> None:
        if self.path is not None:
            self.path.with_suffix(".index").unlink(missing_ok=True)
            self.path.with_suffix(".timeindex").unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------

    def locate(self, offset: int) -> int:
        """Position of the first batch whose last offset is >= offset (``size`` if none)."""
        pos, end = self.offset_index.lookup(offset - self.base_offset), self.store.size
        while pos < end:
            head = self.store.read(pos, _PEEK_SIZE)
            base_offset, length = _OFFSET_AND_LENGTH.unpack_from(head)
            if base_offset + _LAST_OFFSET_DELTA.unpack_from(head, _LAST_OFFSET_DELTA_AT)[0] >= offset:
                return pos
            pos += length + LOG_OVERHEAD
        return end

    def read_batches(self, position: int, max_bytes: int, max_offset: int | None) -> bytes:
        """Whole batches from ``position``: one contiguous read, trimmed to batch boundaries."""
        available = self.store.size - position
        data = self.store.read(position, min(max(max_bytes, LOG_OVERHEAD), available))
        first_size = _batch_size_at(data, 0)
        if first_size > len(data):  # KIP-74: the first batch comes whole, however big
            data = self.store.read(position, first_size)
        end = whole_batches_end(data, max_offset)
        return data if end == len(data) else data[:end]

    def iter_batches(self, position: int = 0) -> Iterator[tuple[int, BatchHeader, bytes]]:
        for pos, view in scan_batches(self.store.read, self.store.size, position):
            yield pos, BatchHeader.parse(view), bytes(view)

    def find_timestamp(self, timestamp: int, min_offset: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after ``timestamp`` (ListOffsets).

        The time index narrows the search to a few batches; batch headers carry each
        batch's largest timestamp, and only the first batch that reaches ``timestamp`` is
        decoded to find the record.
        """
        if self.max_timestamp < timestamp:
            return None
        start = max(self.base_offset + self.time_index.lookup_before(timestamp), min_offset)
        for _, header, batch in self.iter_batches(self.locate(start)):
            if header.max_timestamp < timestamp:
                continue
            for record in iter_records(batch):
                # LogAppendTime: the broker's time stamped on the batch is every record's time
                ts = header.max_timestamp if header.timestamp_type == 1 else record.timestamp
                if ts >= timestamp and record.offset >= min_offset:
                    return record.offset, ts
        return None

    def header_at(self, position: int) -> BatchHeader:
        return BatchHeader.parse(self.store.read(position, HEADER_SIZE))

    # -- recovery ------------------------------------------------------------------------

    def _rebuild(self, index_interval: int, *, check_crc: bool) -> None:
        """Rebuild all metadata by scanning; cut the segment after its last sound batch."""
        self._reset()
        good_end = 0
        try:
            for pos, view in scan_batches(self.store.read, self.store.size):
                header = _checked_header(view, check_crc)
                if header.base_offset < self.next_offset:
                    raise CorruptRecordError("batch offsets go backwards")
                if header.last_offset - self.base_offset > MAX_RELATIVE_OFFSET:  # the CRC does not cover offsets
                    raise CorruptRecordError(f"batch offset {header.base_offset} is outside the segment's range")
                self._track(header, pos, index_interval)
                good_end = pos + len(view)
        except CorruptRecordError as e:
            log.warning("%s: %s at position %d; truncating %d bytes", self.path or "segment",
                        e, good_end, self.store.size - good_end)
            self.truncated_bytes = self.store.size - good_end
            self.store.truncate(good_end)

    def _load_indexes(self, index_interval: int) -> bool:
        """Trust the index files if they fit the log; then scan only the part after the
        last offset index entry. False (metadata half-built) when a rebuild is needed."""
        assert self.path is not None, "only file segments have index files"
        raw_offsets = read_if_exists(self.path.with_suffix(".index"))
        raw_times = read_if_exists(self.path.with_suffix(".timeindex"))
        if raw_offsets is None or raw_times is None:
            return False
        offsets = OffsetIndex.from_bytes(raw_offsets, self.size)
        times = TimeIndex.from_bytes(raw_times)
        if offsets is None or times is None:
            return False
        self.offset_index, self.time_index = offsets, times
        last = times.last()
        if last:
            self.max_timestamp = last[0]
            self.offset_of_max_timestamp = self.base_offset + last[1]
        return self._scan_tail(offsets.last_position(), index_interval)

    def _scan_tail(self, start: int, index_interval: int) -> bool:
        expected = self.base_offset + (self.offset_index.offsets[-1] if len(self.offset_index) else 0)
        try:
            for pos, view in scan_batches(self.store.read, self.store.size, start):
                header = _checked_header(view, False)
                if pos == start and len(self.offset_index) and header.base_offset != expected:
                    return False  # the index points somewhere else than a batch of its offset
                self._track(header, pos, index_interval)
        except CorruptRecordError:
            return False
        if self.size and start > 0:
            self.first_timestamp = self.header_at(0).max_timestamp
        last = self.time_index.last()
        return last is None or self.base_offset + last[1] < max(self.next_offset, self.base_offset + 1)

    def flush(self) -> None:
        self.store.flush()

    def close(self) -> None:
        self.store.close()
