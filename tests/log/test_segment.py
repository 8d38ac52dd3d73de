"""Segments and their sparse indexes: the on-disk layout Kafka tools expect."""

from __future__ import annotations

import itertools
import struct

import pytest

from minikafka.log.index import OffsetIndex, TimeIndex
from minikafka.log.segment import Segment, file_name, scan_batches, whole_batches_end, with_log_append_time
from minikafka.records import BatchHeader, CorruptRecordError, Record, build_batch, validate


def make_batch(base_offset: int, count: int, *, ts: int = 1_000, value_size: int = 100) -> bytes:
    records = [Record(base_offset + i, ts + i, b"k%d" % i, b"v" * value_size) for i in range(count)]
    return build_batch(records, base_offset=base_offset)


def fill(segment: Segment, batches: int, per_batch: int = 5, interval: int = 1_000) -> list[bytes]:
    out = []
    for i in range(batches):
        b = make_batch(segment.base_offset + i * per_batch, per_batch, ts=1_000 + 10 * i)
        segment.append(b, BatchHeader.parse(b), interval)
        out.append(b)
    return out


def test_segment_file_names_are_20_digit_base_offsets():
    assert file_name(0) == "00000000000000000000.log"
    assert file_name(1234, ".timeindex") == "00000000000000001234.timeindex"


def test_offset_index_bytes_are_big_endian_int32_pairs():
    index = OffsetIndex()
    index.append(0, 0)
    index.append(7, 4_096)
    assert index.to_bytes() == struct.pack(">iiii", 0, 0, 7, 4_096)
    again = OffsetIndex.from_bytes(index.to_bytes(), log_size=10_000)
    assert list(again.offsets) == [0, 7] and list(again.positions) == [0, 4_096]


def test_time_index_bytes_are_int64_timestamp_int32_offset():
    index = TimeIndex()
    index.maybe_append(1_000, 0)
    index.maybe_append(900, 3)  # not a new maximum: no entry
    index.maybe_append(2_000, 5)
    assert index.to_bytes() == struct.pack(">qiqi", 1_000, 0, 2_000, 5)
    assert list(TimeIndex.from_bytes(index.to_bytes()).timestamps) == [1_000, 2_000]


def test_index_files_that_cannot_match_the_log_are_rejected():
    assert OffsetIndex.from_bytes(b"\x00" * 7, log_size=100) is None  # cut short
    assert OffsetIndex.from_bytes(struct.pack(">iiii", 5, 0, 3, 10), log_size=100) is None  # out of order
    assert OffsetIndex.from_bytes(struct.pack(">ii", 5, 200), log_size=100) is None  # past the end
    assert TimeIndex.from_bytes(struct.pack(">qiqi", 9, 0, 5, 1)) is None


def test_offset_index_is_sparse_one_entry_per_index_interval_bytes():
    segment = Segment.create(None, 0, now_ms=0)
    batches = fill(segment, 20, interval=1_000)  # each batch is ~600 bytes
    assert 0 < len(segment.offset_index) < len(batches)
    positions = list(segment.offset_index.positions)
    assert all(b - a >= 1_000 for a, b in itertools.pairwise(positions))


def test_locate_finds_the_batch_containing_an_offset_inside_it():
    segment = Segment.create(None, 100, now_ms=0)
    batches = fill(segment, 10, per_batch=5, interval=1_000)
    position = segment.locate(100 + 5 * 6 + 3)  # fourth record of the seventh batch
    assert position == sum(len(b) for b in batches[:6])
    assert segment.locate(10_000) == segment.size


def test_read_batches_returns_whole_batches_and_at_least_one():
    segment = Segment.create(None, 0, now_ms=0)
    batches = fill(segment, 4)
    assert segment.read_batches(0, 1, None) == batches[0]  # KIP-74
    assert segment.read_batches(0, len(batches[0]) * 2 + 10, None) == batches[0] + batches[1]
    assert segment.read_batches(0, 1 << 20, 10) == batches[0] + batches[1]


def test_whole_batches_end_stops_at_a_partial_batch_and_at_max_offset():
    data = make_batch(0, 2) + make_batch(2, 2)
    assert whole_batches_end(data[:-1], None) == len(make_batch(0, 2))
    assert whole_batches_end(data, 2) == len(make_batch(0, 2))
    assert whole_batches_end(data, None) == len(data)


def test_log_append_time_stamp_sets_the_attribute_bit_and_keeps_the_crc_valid():
    stamped = with_log_append_time(make_batch(0, 3), 42_000)
    header = validate(stamped)
    assert header.timestamp_type == 1 and header.max_timestamp == 42_000


def test_scan_yields_every_sound_batch_before_a_corrupt_length():
    good = make_batch(0, 2) + make_batch(2, 2)
    data = good + struct.pack(">qi", 4, 3) + b"\x00" * 50  # length 3 is impossible
    seen = []
    with pytest.raises(CorruptRecordError):
        for position, _batch in scan_batches(lambda p, n: data[p : p + n], len(data)):
            seen.append(position)
    assert seen == [0, len(make_batch(0, 2))]


def test_scan_reads_a_batch_bigger_than_its_chunk():
    big = make_batch(0, 3, value_size=600_000)  # ~1.8 MB, larger than the 1 MiB scan chunk
    data = make_batch(0, 1) + big
    batches = [bytes(b) for _, b in scan_batches(lambda p, n: data[p : p + n], len(data))]
    assert batches[1] == big


def test_recovered_segment_rebuilds_the_same_indexes(tmp_path):
    segment = Segment.create(tmp_path, 0, now_ms=0)
    fill(segment, 30, interval=1_000)
    segment.seal()
    expected = (list(segment.offset_index.offsets), list(segment.time_index.timestamps), segment.next_offset)
    segment.close()
    (tmp_path / file_name(0, ".index")).unlink()  # force a scan
    rebuilt = Segment.open(tmp_path / file_name(0), index_interval=1_000, active=False)
    assert (list(rebuilt.offset_index.offsets), rebuilt.next_offset) == (expected[0], expected[2])
    assert rebuilt.max_timestamp == expected[1][-1]
