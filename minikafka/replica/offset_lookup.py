"""Which offset a ListOffsets timestamp names, in one partition (KIP-79, KIP-734, KIP-405, KIP-1005, KIP-1023).

Timestamp -2 asks for the log start offset (earliest), -1 for the end: the high watermark,
or the last stable offset for ``read_committed`` consumers; -3 for the record with the
largest timestamp (KIP-734); -4 for the earliest offset kept on the broker's own disk
(KIP-405; without tiered storage, the log start offset) and -5 for the latest offset in
tiered storage (KIP-1005; none here, so -1). -6 (KIP-1023) is the earliest offset still
waiting to be copied to tiered storage: with no tiered storage nothing waits, so -1 as
well. Any other value finds the first record whose timestamp is at or after it.
"""

from __future__ import annotations

from .. import records
from .partition import Partition

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
EARLIEST_PENDING_UPLOAD = -6


def lookup(part: Partition, timestamp: int, committed: bool) -> tuple[int, int]:
    """(timestamp, offset) that ``timestamp`` names; (-1, -1) where there is none."""
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, part.log_start_offset
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1
    if timestamp == LATEST:
        return -1, part.last_stable_offset if committed else part.high_watermark
    if timestamp == MAX_TIMESTAMP:
        return _max_timestamp(part)
    found = part.log.offset_for_timestamp(timestamp)
    if found is None or found[0] >= part.high_watermark:
        return -1, -1
    return found[1], found[0]


def _max_timestamp(part: Partition) -> tuple[int, int]:
    """(timestamp, offset) of the first record carrying the largest timestamp (a scan: rare)."""
    best = None
    for header, batch in part.log.batches(part.log_start_offset):
        if header.base_offset >= part.high_watermark:
            break
        if not header.is_control and (best is None or header.max_timestamp > best[0].max_timestamp):
            best = (header, batch)
    if best is None:
        return -1, -1
    record = next(r for r in records.iter_records(best[1]) if r.timestamp == best[0].max_timestamp)
    return record.timestamp, record.offset
