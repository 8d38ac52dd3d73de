"""The sparse offset index and time index of one log segment.

Kafka does not index every batch. After each ``index.interval.bytes`` of log it records
where a batch starts, so a lookup is a binary search to the nearest entry at or before
the wanted offset followed by a short forward scan of batch headers.

* ``.index``: entries of (int32 offset relative to the segment's base offset, int32 byte
  position in the ``.log`` file). Here the offset is the batch's *base* offset.
* ``.timeindex``: entries of (int64 timestamp, int32 relative offset), where the
  timestamp is the largest seen so far in the segment and the offset is the batch that
  first reached it (KIP-33). Timestamps only ever grow, so this too is a binary search.

Both are held in memory as arrays and written to disk, big-endian like Kafka's, when a
segment is rolled or the log closed. Files that fail the consistency checks in
``from_bytes`` are ignored and rebuilt by scanning the segment.
"""

from __future__ import annotations

import itertools
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right

OFFSET_ENTRY = 8  # int32 relative offset + int32 position
TIME_ENTRY = 12  # int64 timestamp + int32 relative offset


def _big_endian(values: array) -> bytes:
    if sys.byteorder == "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_big_endian(typecode: str, data: bytes) -> array:
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder == "little":
        values.byteswap()
    return values


class OffsetIndex:
    """Relative base offset -> file position of some batches of a segment."""

    def __init__(self) -> None:
        self.offsets = array("i")
        self.positions = array("i")

    def __len__(self) -> int:
        return len(self.offsets)

    def append(self, relative_offset: int, position: int) -> None:
        if self.offsets and relative_offset <= self.offsets[-1]:
            return  # entries must grow; a duplicate would break the binary search
        self.offsets.append(relative_offset)
        self.positions.append(position)

    def lookup(self, relative_offset: int) -> int:
        """Position of the last indexed batch starting at or before ``relative_offset``."""
        i = bisect_right(self.offsets, relative_offset) - 1
        return self.positions[i] if i >= 0 else 0

    def last_position(self) -> int:
        return self.positions[-1] if self.positions else 0

    def to_bytes(self) -> bytes:
        pairs = array("i", bytes(8 * len(self.offsets)))
        pairs[0::2] = self.offsets
        pairs[1::2] = self.positions
        return _big_endian(pairs)

    @classmethod
    def from_bytes(cls, data: bytes, log_size: int) -> OffsetIndex | None:
        """Parse an ``.index`` file; None when it cannot belong to a log of ``log_size``."""
        if len(data) % OFFSET_ENTRY:
            return None
        pairs = _from_big_endian("i", data)
        index = cls()
        index.offsets, index.positions = pairs[0::2], pairs[1::2]
        if not _strictly_increasing(index.offsets) or not _strictly_increasing(index.positions):
            return None
        if index.positions and not (
            index.offsets[0] >= 0 and index.positions[0] >= 0 and index.positions[-1] < log_size
        ):
            return None
        return index


class TimeIndex:
    """Largest timestamp so far -> the batch (relative offset) that reached it."""

    def __init__(self) -> None:
        self.timestamps = array("q")
        self.offsets = array("i")

    def __len__(self) -> int:
        return len(self.timestamps)

    def maybe_append(self, timestamp: int, relative_offset: int) -> None:
        if timestamp < 0 or (self.timestamps and timestamp <= self.timestamps[-1]):
            return  # only a new maximum is worth an entry
        self.timestamps.append(timestamp)
        self.offsets.append(relative_offset)

    def last(self) -> tuple[int, int] | None:
        return (self.timestamps[-1], self.offsets[-1]) if self.timestamps else None

    def lookup_before(self, timestamp: int) -> int:
        """Relative offset from which the first batch with a timestamp >= ``timestamp`` may be found."""
        i = bisect_left(self.timestamps, timestamp) - 1
        return self.offsets[i] if i >= 0 else 0

    def to_bytes(self) -> bytes:
        entry = struct.Struct(">qi")
        return b"".join(entry.pack(t, o) for t, o in zip(self.timestamps, self.offsets))

    @classmethod
    def from_bytes(cls, data: bytes) -> TimeIndex | None:
        """Parse a ``.timeindex`` file; None when its entries are not in order."""
        if len(data) % TIME_ENTRY:
            return None
        index = cls()
        for t, o in struct.iter_unpack(">qi", data):
            if o < 0:
                return None
            index.timestamps.append(t)
            index.offsets.append(o)
        if not _strictly_increasing(index.timestamps):
            return None
        return index


def _strictly_increasing(values: array) -> bool:
    return all(a < b for a, b in itertools.pairwise(values))
