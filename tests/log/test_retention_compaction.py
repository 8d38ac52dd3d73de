"""Retention (cleanup.policy=delete) and log compaction (cleanup.policy=compact)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from minikafka.log import PartitionLog
from minikafka.records import (
    CONTROL_COMMIT,
    BatchHeader,
    Record,
    build_batch,
    control_record_key,
    iter_records,
)

DAY = 24 * 3600 * 1000


def batch_at(ts: int, count: int = 3) -> bytes:
    return build_batch([Record(i, ts, b"k%d" % i, b"v" * 200) for i in range(count)])


def kv(*pairs: tuple[bytes, bytes | None], ts: int = 0, **fields) -> bytes:
    return build_batch([Record(i, ts, k, v) for i, (k, v) in enumerate(pairs)], **fields)


def records(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for _, b in log.batches() for r in iter_records(b)]


@pytest.fixture(params=["disk", "memory"])
def new_log(request, tmp_path):
    def make(**config):
        directory = tmp_path / "topic-0" if request.param == "disk" else None
        return PartitionLog(directory, config, topic="topic")
    return make


def appended(log: PartitionLog, *batches: bytes, now: int = 0) -> PartitionLog:
    for b in batches:
        log.append([b], append_time_ms=now)
    log.high_watermark = log.log_end_offset  # as a single-replica leader would
    return log


# -- retention -------------------------------------------------------------------------------


def test_retention_ms_deletes_expired_segments_and_moves_the_log_start_offset(new_log):
    log = new_log(**{"segment.bytes": 1_000, "retention.ms": DAY})
    appended(log, *(batch_at(ts) for ts in (0, 0, 0, DAY, DAY, 2 * DAY)))
    paths = [s["path"] for s in log.segments_info()]
    assert log.apply_retention(now_ms=2 * DAY) == 3  # day 0's three; day 1's are not older than a day
    assert log.log_start_offset == 9 == log.segments[0].base_offset
    assert [s["path"] for s in log.segments_info()] == paths[3:]
    for path in filter(None, paths[:3]):
        assert not os.path.exists(path) and not os.path.exists(path.replace(".log", ".index"))


def test_retention_rolls_an_expired_active_segment_then_deletes_it(new_log):
    log = appended(new_log(**{"retention.ms": 1_000}), batch_at(0), batch_at(0))
    assert log.apply_retention(now_ms=500) == 0  # not expired yet: the active segment stays
    assert log.apply_retention(now_ms=DAY) == 1  # expired: rolled, then deleted, as Kafka does
    assert log.log_start_offset == log.log_end_offset == 6 and log.read(6, 100) == b""


def test_retention_bytes_keeps_the_partition_under_the_limit(new_log):
    size = len(batch_at(0))
    log = new_log(**{"segment.bytes": size, "retention.bytes": size * 3, "retention.ms": -1})
    appended(log, *(batch_at(0) for _ in range(8)))
    assert log.apply_retention(now_ms=0) == 5
    assert log.size_bytes() == size * 3 and log.log_start_offset == 15


def test_retention_keeps_segments_above_the_high_watermark(new_log):
    log = new_log(**{"segment.bytes": 1_000, "retention.ms": 1})
    appended(log, *(batch_at(0) for _ in range(4)))
    log.high_watermark = 4  # the second segment (offsets 3-5) is not fully replicated
    assert log.apply_retention(now_ms=DAY) == 1 and log.log_start_offset == 3


def test_compact_only_topics_are_not_deleted_by_retention(new_log):
    log = appended(new_log(**{"cleanup.policy": "compact", "retention.ms": 1}), batch_at(0))
    log.roll(now_ms=0)
    assert log.apply_retention(now_ms=DAY) == 0


def test_fetch_below_the_log_start_offset_after_retention_is_out_of_range(new_log):
    from minikafka.log import OffsetOutOfRange

    log = new_log(**{"segment.bytes": 1_000, "retention.ms": 1})
    appended(log, batch_at(0), batch_at(0))
    log.apply_retention(now_ms=DAY)
    with pytest.raises(OffsetOutOfRange):
        log.read(0, 1 << 20)


# -- compaction -------------------------------------------------------------------------------

COMPACT = {"cleanup.policy": "compact", "delete.retention.ms": 1_000, "min.compaction.lag.ms": 0}


def test_compaction_keeps_the_newest_value_per_key_at_its_offset(new_log):
    log = new_log(**COMPACT)
    appended(log, kv((b"a", b"1"), (b"b", b"1")), kv((b"a", b"2"), (b"c", b"1")), kv((b"b", b"2")))
    log.roll(now_ms=0)
    appended(log, kv((b"d", b"1")))
    assert log.compact(now_ms=0) == 2
    assert records(log) == [(2, b"a", b"2"), (3, b"c", b"1"), (4, b"b", b"2"), (5, b"d", b"1")]
    assert log.log_end_offset == 6


def test_compaction_ignores_the_active_segment(new_log):
    log = appended(new_log(**COMPACT), kv((b"a", b"1")), kv((b"a", b"2")))
    assert log.compact(now_ms=0) == 0 and len(records(log)) == 2


def test_tombstones_outlive_delete_retention_ms_then_go(new_log):
    log = new_log(**COMPACT)
    appended(log, kv((b"a", b"1"), ts=0), kv((b"a", None), ts=10_000), kv((b"b", b"1"), ts=10_000))
    log.roll(now_ms=10_000)
    appended(log, kv((b"z", b"1"), ts=10_000))
    assert log.compact(now_ms=10_500) == 1  # the tombstone hides "a" but must be seen by consumers
    assert records(log)[:2] == [(1, b"a", None), (2, b"b", b"1")]
    assert log.compact(now_ms=11_001) == 1
    assert records(log) == [(2, b"b", b"1"), (3, b"z", b"1")]


def test_min_compaction_lag_protects_recent_records(new_log):
    log = new_log(**{**COMPACT, "min.compaction.lag.ms": 5_000})
    appended(log, kv((b"a", b"1"), ts=1_000), kv((b"a", b"2"), ts=1_000))
    log.roll(now_ms=1_000)
    assert log.compact(now_ms=2_000) == 0
    assert log.compact(now_ms=6_000) == 1


def test_compaction_never_drops_the_last_batch_so_the_log_end_offset_survives(tmp_path):
    log = PartitionLog(tmp_path, COMPACT)
    appended(log, kv((b"a", b"1"), ts=0), kv((b"a", None), ts=0))
    log.roll(now_ms=0)
    log.compact(now_ms=DAY)  # the tombstone is expired, but it is the log's last batch
    assert records(log) == [(1, b"a", None)]
    log.close()
    assert PartitionLog(tmp_path, COMPACT).log_end_offset == 2


def test_compaction_keeps_control_and_transactional_batches(new_log):
    log = new_log(**COMPACT)
    txn = dict(producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    marker = build_batch([Record(0, 0, control_record_key(CONTROL_COMMIT), b"\x00\x00\x00\x00\x00\x00")],
                         producer_id=7, producer_epoch=0, transactional=True, control=True)
    appended(log, kv((b"a", b"1"), **txn), marker, kv((b"a", b"2")), kv((b"x", b"1")))
    log.roll(now_ms=0)
    appended(log, kv((b"y", b"1")))
    assert log.compact(now_ms=0) == 0
    assert [h.is_control for h, _ in log.batches()] == [False, True, False, False, False]


def test_rewritten_batches_keep_offsets_gaps_and_producer_sequence(new_log):
    log = new_log(**COMPACT)
    appended(log, kv((b"a", b"1"), (b"b", b"1"), (b"c", b"1"), (b"d", b"1"),
                     producer_id=3, producer_epoch=1, base_sequence=100))
    appended(log, kv((b"a", b"2"), (b"c", b"2")))
    log.roll(now_ms=0)
    appended(log, kv((b"z", b"1")))
    assert log.compact(now_ms=0) == 2
    header, batch = next(log.batches())
    assert (header.base_offset, header.last_offset, header.record_count) == (1, 3, 2)
    assert (header.producer_id, header.base_sequence) == (3, 101)
    assert [r.offset for r in iter_records(batch)] == [1, 3]


def test_untouched_compressed_batches_stay_byte_for_byte(new_log):
    builder = DefaultRecordBatchBuilder(2, 4, False, -1, -1, -1, 1 << 20)  # zstd
    for i in range(10):
        builder.append(i, timestamp=0, key=b"u%d" % i, value=b"v" * 50, headers=[])
    zstd = bytes(builder.build())
    log = appended(new_log(**COMPACT), zstd, kv((b"a", b"1")), kv((b"a", b"2")))
    log.roll(now_ms=0)
    appended(log, kv((b"z", b"1")))
    assert log.compact(now_ms=0) == 1
    header, batch = next(log.batches())
    assert header.compression == 4 and batch[8:] == zstd[8:]


def test_compacted_segments_are_recovered_after_restart(tmp_path):
    log = PartitionLog(tmp_path, {**COMPACT, "segment.bytes": 2_000})
    appended(log, *(kv((b"k%d" % (i % 3), b"v%d" % i)) for i in range(60)))
    log.roll(now_ms=0)
    appended(log, kv((b"z", b"1")))
    log.compact(now_ms=0)
    expected = records(log)
    log.close()
    assert records(PartitionLog(tmp_path, COMPACT)) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", b"d"]), st.one_of(st.none(), st.binary(max_size=8))),
                min_size=1, max_size=40),
       st.integers(min_value=60, max_value=400))
def test_compaction_preserves_the_latest_value_of_every_key(writes, segment_bytes):
    """The rule of compaction: a consumer reading from the start still ends with the same
    table (key -> latest value), offsets only grow, and the log end offset stays."""
    log = PartitionLog(None, {**COMPACT, "segment.bytes": segment_bytes, "delete.retention.ms": DAY})
    appended(log, *(kv(w) for w in writes))
    log.roll(now_ms=0)
    before = records(log)
    log.compact(now_ms=0)
    after = records(log)
    assert {k: v for _, k, v in after} == {k: v for _, k, v in before}
    assert [o for o, _, _ in after] == sorted({o for o, _, _ in after})
    assert set(after) <= set(before) and log.log_end_offset == len(writes)
    for offset in range(log.log_start_offset, log.log_end_offset):  # fetches skip the gaps
        header = BatchHeader.parse(log.read(offset, 1))
        assert header.last_offset >= offset and not any(o < header.base_offset for o, _, _ in after if o >= offset)
