"""Record batches (magic v2), the unit Kafka stores and serves.

The broker keeps batches as the producer sent them: it reads the 61-byte header,
checks the CRC32C (which covers everything from ``attributes`` to the end, so the
``baseOffset`` in front can be patched without recomputing it) and writes the bytes.
Only compaction, the dump tool and the internal topics look inside a batch; for them
this module decodes records (decompressing when needed) and builds new batches.

Layout (see Kafka's "Message format" documentation)::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8
    crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
    maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32
    recordCount int32 | records...
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import crc32c as _crc32c

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part not counted by batchLength
CRC_START = 21  # the CRC covers attributes..end

_HEADER = struct.Struct(">qiibIhiqqqhii")

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1

# Control record keys: version int16, type int16 (0 = abort, 1 = commit).
CONTROL_ABORT, CONTROL_COMMIT = 0, 1


class CorruptRecordError(ValueError):
    """The bytes are not a well-formed v2 record batch (bad size, magic or CRC)."""


@dataclass(frozen=True, slots=True)
class BatchHeader:
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @classmethod
    def parse(cls, data: bytes | memoryview, pos: int = 0) -> BatchHeader:
        if len(data) - pos < HEADER_SIZE:
            raise CorruptRecordError("record batch shorter than its 61-byte header")
        return cls(*_HEADER.unpack_from(data, pos))

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies on disk and on the wire."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def timestamp_type(self) -> int:
        """0 = CreateTime, 1 = LogAppendTime."""
        return 1 if self.attributes & TIMESTAMP_TYPE_BIT else 0

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def crc_of(batch: bytes | memoryview) -> int:
    return _crc32c.crc32c(memoryview(batch)[CRC_START:])


def validate(batch: bytes | memoryview) -> BatchHeader:
    """Parse and check one complete batch; raise CorruptRecordError if it is not sound."""
    header = BatchHeader.parse(batch)
    if header.magic != 2:
        raise CorruptRecordError(f"unsupported record batch magic {header.magic} (only v2 is accepted)")
    if header.size != len(batch) or header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError("record batch length does not match its bytes")
    if header.last_offset_delta < 0 or header.record_count < 0:
        raise CorruptRecordError("record batch has a negative record count")
    if crc_of(batch) != header.crc:
        raise CorruptRecordError("record batch failed its CRC32C check")
    return header


def split_batches(data: bytes | memoryview, *, allow_partial: bool = False) -> list[memoryview]:
    """Cut a byte string of concatenated batches into one view per batch.

    A trailing partial batch is an error unless ``allow_partial`` (fetch responses may
    end in one; a torn log tail is one), in which case it is dropped.
    """
    view = memoryview(data)
    out, pos, end = [], 0, len(view)
    while pos < end:
        if end - pos < LOG_OVERHEAD + 5:
            if allow_partial:
                break
            raise CorruptRecordError("truncated record batch header")
        (length,) = struct.unpack_from(">i", view, pos + 8)
        if length < HEADER_SIZE - LOG_OVERHEAD:
            raise CorruptRecordError(f"record batch length {length} is impossible")
        size = length + LOG_OVERHEAD
        if pos + size > end:
            if allow_partial:
                break
            raise CorruptRecordError("record batch extends past the end of the data")
        out.append(view[pos : pos + size])
        pos += size
    return out


def with_base_offset(batch: bytes | memoryview, base_offset: int) -> bytes:
    """Return the batch with ``baseOffset`` replaced; the CRC stays valid."""
    return struct.pack(">q", base_offset) + bytes(memoryview(batch)[8:])


def with_leader_epoch(batch: bytes, epoch: int) -> bytes:
    return batch[:12] + struct.pack(">i", epoch) + batch[16:]


# ---------------------------------------------------------------------------
# Records inside a batch


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise CorruptRecordError("varint runs past the end of the record")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptRecordError("varint is too long")


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    n, pos = _read_varint(buf, pos)
    if n < 0:
        return None, pos
    if pos + n > len(buf):
        raise CorruptRecordError("record field runs past the end of the record")
    return bytes(buf[pos : pos + n]), pos + n


# The most bytes a batch's records may take once decompressed. A producer builds batches
# from at most batch.size (librdkafka: 1 MB) of uncompressed records, so real batches stay
# far below this; a "decompression bomb" (a few KB of zstd that expand to a gigabyte) is
# refused here instead of growing the broker, the log cleaner or dump-log to gigabytes.
MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024


class DecompressedTooLarge(CorruptRecordError):
    """A compressed batch expands past the limit."""


def decompress(codec: int, data: bytes, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """The batch body uncompressed, never more than ``limit`` bytes of memory for it."""
    if codec == COMPRESSION_NONE:
        return data
    import cramjam  # imported lazily: the hot path never decompresses

    if codec == COMPRESSION_SNAPPY:
        if data[:8] == b"\x82SNAPPY\x00":  # xerial framing used by the Java client
            out, pos = bytearray(), 16
            while pos + 4 <= len(data):
                (n,) = struct.unpack_from(">i", data, pos)
                out += _snappy_block(cramjam, data[pos + 4 : pos + 4 + n], limit - len(out))
                pos += 4 + n
            return bytes(out)
        return _snappy_block(cramjam, data, limit)
    module = {COMPRESSION_GZIP: cramjam.gzip, COMPRESSION_LZ4: cramjam.lz4, COMPRESSION_ZSTD: cramjam.zstd}.get(codec)
    if module is None:
        raise CorruptRecordError(f"unknown compression codec {codec}")
    # Decompress into a buffer that doubles until the data fits or the limit is reached:
    # the memory is bounded, and the work is at most twice a single pass.
    size = min(limit, max(64 * 1024, 4 * len(data)))
    while True:
        out = bytearray(size + 1)  # one byte more than allowed: a full buffer means "too small"
        try:
            n = module.decompress_into(data, out)
        except cramjam.DecompressionError as e:
            if "whole buffer" not in str(e):
                raise CorruptRecordError(f"{COMPRESSION_NAMES[codec]} data is corrupt: {e}") from None
            n = len(out)
        if n <= size:
            return bytes(out[:n])
        if size >= limit:
            raise DecompressedTooLarge(f"{COMPRESSION_NAMES[codec]} batch expands to more than {limit:,} bytes")
        size = min(limit, size * 2)


def _snappy_block(cramjam: Any, block: bytes, limit: int) -> bytes:
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except cramjam.DecompressionError as e:
        raise CorruptRecordError(f"snappy data is corrupt: {e}") from None
    if size > limit:
        raise DecompressedTooLarge(f"snappy batch expands to more than {max(limit, 0):,} bytes")
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except cramjam.DecompressionError as e:
        raise CorruptRecordError(f"snappy data is corrupt: {e}") from None


def iter_records(batch: bytes | memoryview) -> Iterator[Record]:
    """Decode the records of one batch (decompressing if needed)."""
    header = BatchHeader.parse(batch)
    body = decompress(header.compression, bytes(memoryview(batch)[HEADER_SIZE:]))
    pos = 0
    for _ in range(header.record_count):
        length, pos = _read_varint(body, pos)
        end = pos + length
        pos += 1  # record attributes, unused
        ts_delta, pos = _read_varint(body, pos)
        off_delta, pos = _read_varint(body, pos)
        key, pos = _read_bytes(body, pos)
        value, pos = _read_bytes(body, pos)
        n_headers, pos = _read_varint(body, pos)
        headers = []
        for _ in range(n_headers):
            hkey, pos = _read_bytes(body, pos)
            hval, pos = _read_bytes(body, pos)
            headers.append(((hkey or b"").decode("utf-8", "replace"), hval))
        if pos != end:
            raise CorruptRecordError("record length does not match its fields")
        yield Record(header.base_offset + off_delta, header.base_timestamp + ts_delta, key, value, headers)


def _varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(data: bytes | None) -> bytes:
    return _varint(-1) if data is None else _varint(len(data)) + data


def build_batch(
    records: list[Record],
    *,
    base_offset: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = -1,
) -> bytes:
    """Encode uncompressed records into one batch. Offsets are taken relative to the first."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    first_offset, base_ts = records[0].offset, min(r.timestamp for r in records)
    body = bytearray()
    for r in records:
        rec = b"\x00" + _varint(r.timestamp - base_ts) + _varint(r.offset - first_offset)
        rec += _field(r.key) + _field(r.value) + _varint(len(r.headers))
        for hk, hv in r.headers:
            rec += _field(hk.encode()) + _field(hv)
        body += _varint(len(rec)) + rec
    attributes = (TRANSACTIONAL_BIT if transactional else 0) | (CONTROL_BIT if control else 0)
    tail = struct.pack(
        ">hiqqqhii",
        attributes,
        records[-1].offset - first_offset,
        base_ts,
        max(r.timestamp for r in records),
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    ) + bytes(body)
    crc = _crc32c.crc32c(tail)
    head = struct.pack(">qiibI", base_offset, len(tail) + 9, partition_leader_epoch, 2, crc)
    return head + tail


def control_record_key(kind: int) -> bytes:
    return struct.pack(">hh", 0, kind)


def parse_control_key(key: bytes | None) -> int | None:
    """Return CONTROL_ABORT / CONTROL_COMMIT for a control record key, else None."""
    if key is None or len(key) < 4:
        return None
    return struct.unpack_from(">h", key, 2)[0]
