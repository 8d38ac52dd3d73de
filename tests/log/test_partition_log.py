"""PartitionLog: the offsets, fetch rules and recovery a Kafka partition guarantees."""

from __future__ import annotations

import logging
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder

from minikafka.log import AppendResult, OffsetOutOfRange, PartitionLog, UnexpectedAppendOffset
from minikafka.records import BatchHeader, Record, build_batch, iter_records, split_batches, validate


def make_batch(count: int, *, ts: int = 1_000, key: bytes = b"k", size: int = 100, ts_step: int = 1) -> bytes:
    """A producer's batch: offsets from 0, the broker assigns the real ones."""
    records = [Record(i, ts + i * ts_step, key + b"%d" % i, b"v" * size) for i in range(count)]
    return build_batch(records)


def kafka_python_batch(codec: int, count: int = 50, ts: int = 5_000) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=False,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )
    for i in range(count):
        builder.append(i, timestamp=ts + i, key=b"key-%d" % i, value=b"value-%d" % i * 5, headers=[("h", b"x")])
    return bytes(builder.build())


def offsets_of(data: bytes) -> list[int]:
    return [r.offset for b in split_batches(data) for r in iter_records(b)]


@pytest.fixture(params=["disk", "memory"])
def new_log(request, tmp_path):
    """Build logs either in a partition directory or in memory: both must behave alike."""
    def make(**config):
        directory = tmp_path / "topic-0" if request.param == "disk" else None
        return PartitionLog(directory, config, topic="topic", partition=0)
    return make


# -- append and read ---------------------------------------------------------------------


def test_append_assigns_consecutive_offsets_and_reports_them(new_log):
    log = new_log()
    assert log.append([make_batch(3)]) == AppendResult(0, 2, -1, 0)
    assert log.append([make_batch(2), make_batch(4)]) == AppendResult(3, 8, -1, 0)
    assert log.log_end_offset == 9
    assert offsets_of(log.read(0, 1 << 20)) == list(range(9))


def test_patched_base_offset_keeps_the_batch_crc_valid(new_log):
    log = new_log()
    log.append([make_batch(3)])
    log.append([make_batch(3)])
    second = split_batches(log.read(3, 1 << 20))[0]
    assert validate(second).base_offset == 3


def test_fetch_inside_a_batch_returns_the_whole_batch(new_log):
    log = new_log()
    log.append([make_batch(5)])
    log.append([make_batch(5)])
    data = log.read(7, 1 << 20)
    assert BatchHeader.parse(data).base_offset == 5
    assert offsets_of(data) == [5, 6, 7, 8, 9]


def test_fetch_returns_only_whole_batches_up_to_max_bytes(new_log):
    log = new_log()
    for _ in range(5):
        log.append([make_batch(5)])
    one = len(make_batch(5))
    assert len(log.read(0, one * 2 + one // 2)) == one * 2


def test_kip74_a_first_batch_larger_than_max_bytes_is_still_returned(new_log):
    log = new_log()
    log.append([make_batch(50)])
    log.append([make_batch(50)])
    data = log.read(0, 10)
    assert len(data) == len(make_batch(50)) and offsets_of(data) == list(range(50))


def test_fetch_stops_before_the_high_watermark(new_log):
    log = new_log()
    for _ in range(3):
        log.append([make_batch(2)])
    log.high_watermark = 4
    assert offsets_of(log.read(0, 1 << 20, max_offset=log.high_watermark)) == [0, 1, 2, 3]
    assert log.read(4, 1 << 20, max_offset=log.high_watermark) == b""


def test_high_watermark_never_exceeds_the_log_end_offset(new_log):
    log = new_log()
    log.append([make_batch(2)])
    log.high_watermark = 10
    assert log.high_watermark == 2


def test_fetch_at_the_log_end_offset_is_empty_and_beyond_it_out_of_range(new_log):
    log = new_log()
    log.append([make_batch(2)])
    assert log.read(2, 1 << 20) == b""
    with pytest.raises(OffsetOutOfRange):
        log.read(3, 1 << 20)


def test_compressed_batches_are_stored_byte_for_byte_and_decodable(new_log):
    log = new_log()
    produced = [kafka_python_batch(codec) for codec in range(5)]  # none, gzip, snappy, lz4, zstd
    for batch in produced:
        log.append([batch])
    stored = split_batches(log.read(0, 1 << 30))
    assert [BatchHeader.parse(b).compression for b in stored] == [0, 1, 2, 3, 4]
    for i, (sent, kept) in enumerate(zip(produced, stored)):
        assert bytes(kept[8:]) == sent[8:]  # only the base offset differs
        records = list(iter_records(kept))
        assert [r.offset for r in records] == list(range(50 * i, 50 * i + 50))
        assert records[7].key == b"key-7" and records[7].headers == [("h", b"x")]


def test_kafka_python_consumer_parses_a_fetch_of_compressed_batches(new_log):
    log = new_log()
    for codec in range(5):
        log.append([kafka_python_batch(codec)])
    fetched, offsets = MemoryRecords(log.read(60, 1 << 30)), []  # from inside the gzip batch
    while fetched.has_next():
        offsets += [r.offset for r in fetched.next_batch()]
    assert offsets == list(range(50, 250))


def test_log_append_time_rewrites_timestamp_type_and_max_timestamp(new_log):
    log = new_log(**{"message.timestamp.type": "LogAppendTime"})
    result = log.append([make_batch(3, ts=1)], append_time_ms=77_000)
    assert result.log_append_time == 77_000
    header = validate(log.read(0, 1 << 20))
    assert header.timestamp_type == 1 and header.max_timestamp == 77_000


def test_follower_append_keeps_the_leaders_log_append_time(new_log):
    leader = new_log(**{"message.timestamp.type": "LogAppendTime"})
    leader.append([make_batch(2, ts=1)], append_time_ms=5_000)
    follower = PartitionLog(None, {"message.timestamp.type": "LogAppendTime"})
    copied = leader.read(0, 1 << 20)
    follower.append([copied], append_time_ms=9_000, assign_offsets=False)
    assert follower.read(0, 1 << 20) == copied


def test_follower_append_keeps_offsets_and_refuses_to_go_back(new_log):
    log = new_log()
    replicated = build_batch([Record(10, 1, b"a", b"x"), Record(11, 1, b"b", b"y")], base_offset=10)
    assert log.append([replicated], assign_offsets=False) == AppendResult(10, 11, -1, 0)
    assert log.log_end_offset == 12
    with pytest.raises(UnexpectedAppendOffset):
        log.append([build_batch([Record(11, 1, b"c", b"z")], base_offset=11)], assign_offsets=False)


def test_batches_iterates_from_the_batch_holding_the_start_offset(new_log):
    log = new_log(**{"segment.bytes": 2_000})
    for _ in range(10):
        log.append([make_batch(4)])
    headers = [h.base_offset for h, _ in log.batches(10)]
    assert headers == list(range(8, 40, 4))


# -- segments ------------------------------------------------------------------------------


def test_segment_rolls_when_it_would_pass_segment_bytes(new_log):
    one = len(make_batch(5))
    log = new_log(**{"segment.bytes": one * 3})
    for _ in range(7):
        log.append([make_batch(5)])
    info = log.segments_info()
    assert [s["base_offset"] for s in info] == [0, 15, 30]
    assert all(s["size"] <= one * 3 for s in info)
    assert offsets_of(log.read(14, 1 << 20)) == list(range(10, 15))  # one read, one segment
    assert offsets_of(log.read(15, 1 << 20))[0] == 15


def test_segment_rolls_when_older_than_segment_ms_by_record_time(new_log):
    log = new_log(**{"segment.ms": 60_000})
    log.append([make_batch(1, ts=0)], append_time_ms=0)
    log.append([make_batch(1, ts=60_000)], append_time_ms=60_000)  # exactly segment.ms: not older
    log.append([make_batch(1, ts=60_001)], append_time_ms=60_001)
    assert [s["base_offset"] for s in log.segments_info()] == [0, 2]
    assert log.segments_info()[1]["first_timestamp"] == 60_001


def test_segment_files_are_named_by_base_offset(tmp_path):
    log = PartitionLog(tmp_path, {"segment.bytes": 1_000})
    for _ in range(5):
        log.append([make_batch(3)])
    log.close()
    names = sorted(os.listdir(tmp_path))
    assert "00000000000000000000.log" in names and "00000000000000000000.index" in names
    assert "00000000000000000000.timeindex" in names
    assert [s["path"] for s in log.segments_info()][1].endswith(f"{log.segments[1].base_offset:020d}.log")


def test_roll_without_data_does_not_create_an_empty_segment(new_log):
    log = new_log()
    log.roll()
    assert len(log.segments) == 1


# -- recovery ------------------------------------------------------------------------------


def fill_disk_log(directory, batches: int = 30, **config) -> tuple[PartitionLog, bytes]:
    log = PartitionLog(directory, {"segment.bytes": 4_000, "index.interval.bytes": 500, **config})
    for i in range(batches):
        log.append([make_batch(3, ts=10_000 + 100 * i)])
    return log, log.read(0, 1 << 30) + b"".join(log.read(s.base_offset, 1 << 30) for s in log.segments[1:])


def test_restart_recovers_every_acknowledged_batch(tmp_path):
    log, before = fill_disk_log(tmp_path)
    log.close()
    again, after = fill_disk_log(tmp_path, batches=0)
    assert after == before and again.log_end_offset == 90 and again.high_watermark == 90
    assert [s["base_offset"] for s in again.segments_info()] == [s["base_offset"] for s in log.segments_info()]


def test_restart_without_close_recovers_too(tmp_path):
    _log, before = fill_disk_log(tmp_path)  # a crash: no close, active segment's index never written
    again, after = fill_disk_log(tmp_path, batches=0)
    assert after == before and again.log_end_offset == 90
    assert again.offset_for_timestamp(10_000 + 100 * 29 + 1) == (88, 10_000 + 100 * 29 + 1)


def test_recovery_truncates_a_torn_tail(tmp_path, caplog):
    log, before = fill_disk_log(tmp_path)
    active = log.active.path
    log.close()
    half = make_batch(3)[:40]
    with open(active, "ab") as f:
        f.write(half)
    with caplog.at_level(logging.WARNING):
        again, after = fill_disk_log(tmp_path, batches=0)
    assert after == before and again.log_end_offset == 90
    assert os.path.getsize(active) == again.active.size
    assert "truncating 40 bytes" in caplog.text
    assert again.append([make_batch(1)]).base_offset == 90


def test_recovery_truncates_a_last_batch_that_fails_its_crc(tmp_path):
    log, _ = fill_disk_log(tmp_path)
    active, last_end = log.active.path, log.active.size
    log.close()
    with open(active, "r+b") as f:
        f.seek(last_end - 5)
        f.write(b"XXXXX")  # flip bytes of the last record
    again = PartitionLog(tmp_path, {})
    assert again.log_end_offset == 87
    assert again.active.size == last_end - len(make_batch(3))


def test_recovery_drops_garbage_appended_to_the_active_segment(tmp_path):
    log, before = fill_disk_log(tmp_path)
    log.close()
    with open(log.active.path, "ab") as f:
        f.write(os.urandom(3) + b"\x00" * 100)
    _again, after = fill_disk_log(tmp_path, batches=0)
    assert after == before


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=15), st.data())
def test_no_acknowledged_batch_is_lost_when_a_crash_tears_the_next_write(sizes, data):
    """A crash in the middle of a write leaves part of a batch; every batch append()
    returned for must still be there after the restart, and nothing else."""
    with tempfile.TemporaryDirectory() as tmp:
        log = PartitionLog(tmp, {"segment.bytes": 1_500})
        acked = [log.append([make_batch(n)]) for n in sizes]
        torn = make_batch(5)
        with open(log.active.path, "ab") as f:  # the unacknowledged write, cut anywhere
            f.write(torn[: data.draw(st.integers(min_value=1, max_value=len(torn) - 1))])
        again = PartitionLog(tmp, {})
        assert again.log_end_offset == acked[-1].last_offset + 1
        assert [h.base_offset for h, _ in again.batches()] == [r.base_offset for r in acked]


def test_an_older_segment_with_a_bad_index_is_rebuilt(tmp_path):
    log, before = fill_disk_log(tmp_path)
    log.close()
    first = log.segments[0].path
    first.with_suffix(".index").write_bytes(b"\x00\x00\x00\x09\x00\x00\xff\xff")  # points past the end
    first.with_suffix(".timeindex").unlink()
    again, after = fill_disk_log(tmp_path, batches=0)
    assert after == before
    assert len(again.segments[0].offset_index) == len(log.segments[0].offset_index)
    assert offsets_of(again.read(13, 1 << 20))[0] == 12


def test_in_memory_log_matches_the_disk_log(tmp_path):
    disk = PartitionLog(tmp_path, {"segment.bytes": 3_000})
    memory = PartitionLog(None, {"segment.bytes": 3_000})
    for log in (disk, memory):
        for i in range(20):
            log.append([make_batch(i % 4 + 1, ts=i)], append_time_ms=i)
    assert [s["base_offset"] for s in disk.segments_info()] == [s["base_offset"] for s in memory.segments_info()]
    for offset in range(0, disk.log_end_offset, 3):
        assert disk.read(offset, 2_000) == memory.read(offset, 2_000)
    assert all(s["path"] is None for s in memory.segments_info())


# -- offsets by timestamp, truncation, DeleteRecords ------------------------------------------


def test_offset_for_timestamp_finds_the_first_record_not_just_the_batch(new_log):
    log = new_log(**{"index.interval.bytes": 1})
    for i in range(10):
        log.append([make_batch(10, ts=1_000 * i, ts_step=10)])  # batch i: 1000*i .. 1000*i + 90
    assert log.offset_for_timestamp(3_035) == (34, 3_040)
    assert log.offset_for_timestamp(3_040) == (34, 3_040)
    assert log.offset_for_timestamp(0) == (0, 0)
    assert log.offset_for_timestamp(9_091) is None


def test_offset_for_timestamp_with_out_of_order_create_times(new_log):
    log = new_log()
    for ts in (5_000, 1_000, 7_000, 2_000):
        log.append([build_batch([Record(0, ts, b"k", b"v")])])
    assert log.offset_for_timestamp(1_500) == (0, 5_000)  # first in offset order at or after
    assert log.offset_for_timestamp(6_000) == (2, 7_000)


def test_offset_for_timestamp_uses_the_log_append_time(new_log):
    log = new_log(**{"message.timestamp.type": "LogAppendTime"})
    log.append([make_batch(3, ts=1)], append_time_ms=500)
    log.append([make_batch(3, ts=1)], append_time_ms=900)
    assert log.offset_for_timestamp(600) == (3, 900)


def test_truncate_to_drops_everything_from_the_offset(new_log):
    log = new_log(**{"segment.bytes": 1_500})
    for _ in range(10):
        log.append([make_batch(2)])
    log.high_watermark = log.log_end_offset
    log.truncate_to(8)
    assert log.log_end_offset == 8 and log.high_watermark == 8
    assert offsets_of(b"".join(log.read(s.base_offset, 1 << 20) for s in log.segments)) == list(range(8))
    assert log.append([make_batch(1)]).base_offset == 8


def test_truncate_inside_a_batch_drops_the_whole_batch(new_log):
    log = new_log()
    log.append([make_batch(5)])
    log.append([make_batch(5)])
    log.truncate_to(7)
    assert log.log_end_offset == 5


def test_truncated_log_restarts_where_it_was_cut(tmp_path):
    log, _ = fill_disk_log(tmp_path)
    log.truncate_to(39)  # a batch boundary (3 records a batch)
    log.close()
    again = PartitionLog(tmp_path, {})
    assert again.log_end_offset == 39
    assert offsets_of(again.read(37, 1 << 20)) == [36, 37, 38]


def test_truncate_below_the_log_start_offset_empties_the_log(new_log):
    log = new_log()
    log.append([make_batch(5)])
    log.high_watermark = 5
    log.delete_records_before(3)
    log.truncate_to(2)
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)
    assert log.append([make_batch(1)]).base_offset == 2


def test_delete_records_moves_the_log_start_offset_and_deletes_whole_segments(new_log):
    log = new_log(**{"segment.bytes": 600})  # two batches a segment
    for _ in range(10):
        log.append([make_batch(2)])
    log.high_watermark = log.log_end_offset
    bases = [s.base_offset for s in log.segments]
    assert log.delete_records_before(bases[2] + 1) == bases[2] + 1
    assert [s.base_offset for s in log.segments] == bases[2:]
    with pytest.raises(OffsetOutOfRange):
        log.read(bases[2], 1 << 20)
    assert offsets_of(log.read(bases[2] + 1, 1 << 20))[0] == bases[2]  # whole batch, like Kafka


def test_delete_records_cannot_pass_the_high_watermark(new_log):
    log = new_log()
    log.append([make_batch(5)])
    log.high_watermark = 3
    with pytest.raises(OffsetOutOfRange):
        log.delete_records_before(4)
    assert log.delete_records_before(-1) == 3  # -1: up to the high watermark


def test_log_start_offset_from_delete_records_survives_a_restart(tmp_path):
    log, _ = fill_disk_log(tmp_path)
    log.high_watermark = log.log_end_offset
    log.delete_records_before(50)
    log.close()
    assert PartitionLog(tmp_path, {}).log_start_offset == 50


def test_size_and_segments_info_describe_the_files(tmp_path):
    log, _ = fill_disk_log(tmp_path)
    info = log.segments_info()
    assert log.size_bytes() == sum(s["size"] for s in info) == sum(
        os.path.getsize(s["path"]) for s in info
    )
    assert info[0]["first_timestamp"] == 10_002 and info[-1]["last_offset"] == 89
