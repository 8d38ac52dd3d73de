"""Retention and compaction: the two ways Kafka removes data from a partition log.

``cleanup.policy=delete`` (retention) drops whole segments, oldest first, once they are
older than ``retention.ms`` or the partition is larger than ``retention.bytes``.
``cleanup.policy=compact`` (log compaction) keeps only the newest record of each key
and, after ``delete.retention.ms``, forgets the key altogether when that newest record
is a tombstone (a null value). Both only ever touch segments that are not active and
lie entirely below the high watermark, so nothing a consumer has not been allowed to
see yet is removed.

Compaction keeps every surviving record at its original offset and in its original
order: a rewritten batch starts at its first surviving record and may have gaps, which
consumers skip. Batches that lose nothing are kept byte for byte (compressed ones stay
compressed); rewritten ones are stored uncompressed. Transactional and control batches
are kept whole and do not enter the key map, so an aborted write can never erase a
committed value (simpler than Kafka, which also removes aborted data).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..records import BatchHeader, CorruptRecordError, Record, build_batch, iter_records
from .segment import Segment, with_log_append_time

log = logging.getLogger("minikafka.log.cleaner")


def retention_prefix(
    segments: Sequence[Segment],
    *,
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
    high_watermark: int,
    log_start_offset: int,
) -> int:
    """How many of the oldest segments retention deletes (never the active, last, one).

    A segment goes when it is expired (its largest timestamp is more than retention.ms
    ago), when the log minus it would still be at least retention.bytes, or when a
    DeleteRecords moved the log start offset past it. -1 turns a limit off.
    """
    excess = sum(s.size for s in segments) - retention_bytes
    count = 0
    for segment in segments[:-1]:
        if segment.next_offset > high_watermark:
            break
        expired = retention_ms >= 0 and now_ms - segment.largest_timestamp() > retention_ms
        oversize = retention_bytes >= 0 and excess >= segment.size
        below_start = segment.next_offset <= log_start_offset
        if not (expired or oversize or below_start):
            break
        excess -= segment.size
        count += 1
    return count


def cleanable_segments(
    segments: Sequence[Segment], *, now_ms: int, min_lag_ms: int, high_watermark: int
) -> list[Segment]:
    """The oldest non-active segments compaction may rewrite: below the high watermark
    and with no record younger than min.compaction.lag.ms."""
    out = []
    for segment in segments[:-1]:
        if segment.next_offset > high_watermark or now_ms - segment.largest_timestamp() < min_lag_ms:
            break
        out.append(segment)
    return out


def compact_segments(
    segments: list[Segment],
    *,
    now_ms: int,
    delete_retention_ms: int,
    log_end_offset: int,
    index_interval: int,
) -> int:
    """Rewrite ``segments`` keeping the newest record per key; return records removed.

    The batch holding the log's last offset is never touched, so the log end offset a
    restart recovers stays where it was.
    """
    latest = _offset_map(segments)
    tombstone_horizon = now_ms - delete_retention_ms
    removed = 0
    for segment in segments:
        kept: list[bytes] = []
        dropped = 0
        for _, header, batch in segment.iter_batches():
            if header.last_offset == log_end_offset - 1:
                kept.append(batch)
                continue
            new_batch, n = _clean_batch(header, batch, latest, tombstone_horizon)
            dropped += n
            if new_batch is not None:
                kept.append(new_batch)
        if dropped:
            segment.replace(kept, index_interval)
            removed += dropped
    return removed


def _compactable(header: BatchHeader) -> bool:
    return not (header.is_control or header.is_transactional)


def _records_or_none(header: BatchHeader, batch: bytes | memoryview) -> list[Record] | None:
    """The batch's records, or None (kept as it is, uncleaned) when they cannot be read:
    damaged bytes or a batch that would decompress past the bound."""
    try:
        return list(iter_records(batch))
    except CorruptRecordError as e:
        log.warning("not compacting the batch at offset %d: %s", header.base_offset, e)
        return None


def _offset_map(segments: list[Segment]) -> dict[bytes, int]:
    """The newest offset of every key in the part being cleaned (Kafka's "offset map")."""
    latest: dict[bytes, int] = {}
    for segment in segments:
        for _, header, batch in segment.iter_batches():
            if _compactable(header):
                for record in _records_or_none(header, batch) or ():
                    if record.key is not None:
                        latest[record.key] = record.offset
    return latest


def _clean_batch(
    header: BatchHeader, batch: bytes, latest: dict[bytes, int], tombstone_horizon: int
) -> tuple[bytes | None, int]:
    """The batch to keep in place of ``batch`` (None: nothing survives) and how many records went."""
    records = _records_or_none(header, batch) if _compactable(header) else None
    if records is None:
        return batch, 0
    if header.timestamp_type == 1:  # LogAppendTime: the batch's time is every record's time
        for record in records:
            record.timestamp = header.max_timestamp
    kept = [r for r in records if _survives(r, latest, tombstone_horizon)]
    if len(kept) == len(records):
        return batch, 0
    if not kept:
        return None, len(records)
    return _rebuilt(header, kept), len(records) - len(kept)


def _survives(record: Record, latest: dict[bytes, int], tombstone_horizon: int) -> bool:
    if record.key is None:
        return True  # a compacted topic should not hold keyless records; keep rather than guess
    if latest.get(record.key) != record.offset:
        return False  # a newer record of the same key supersedes it
    return record.value is not None or record.timestamp >= tombstone_horizon


def _rebuilt(header: BatchHeader, kept: list[Record]) -> bytes:
    """A new batch of the surviving records, at their own offsets, same producer fields.

    The base sequence moves with the first surviving record, so each record keeps the
    sequence number it was produced with (sequence = base sequence + offset delta).
    """
    shift = kept[0].offset - header.base_offset
    sequence = header.base_sequence
    if sequence >= 0:
        sequence = (sequence + shift) & 0x7FFFFFFF
    batch = build_batch(
        kept,
        base_offset=kept[0].offset,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=sequence,
        partition_leader_epoch=header.partition_leader_epoch,
    )
    return with_log_append_time(batch, header.max_timestamp) if header.timestamp_type == 1 else batch
