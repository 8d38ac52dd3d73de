"""One partition replica on one broker: its log, its high watermark, its producers.

The leader's write path lives here: split the produced bytes into batches, check each
(CRC, size limit, idempotent sequence), append them to the log, and wake the fetch
requests waiting for new data. Consumers read up to the high watermark (or the last
stable offset for ``read_committed``), never past it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass

from . import records
from .config import TopicConfig
from .errors import ErrorCode, KafkaError
from .log import PartitionLog
from .producer_state import Duplicate, ProducerStateTable


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class AppendInfo:
    base_offset: int
    log_append_time: int
    log_start_offset: int
    last_offset: int


class Partition:
    def __init__(self, topic: str, index: int, log: PartitionLog, config: TopicConfig):
        self.topic, self.index, self.log, self.config = topic, index, log, config
        self.producers = ProducerStateTable()
        self.leader_epoch = 0
        self._waiters: list[asyncio.Future] = []
        for header, _batch in log.batches(log.log_start_offset):
            self.producers.record(header)
        log.high_watermark = log.log_end_offset

    # -- offsets ------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the oldest open transaction, or the high watermark."""
        firsts = self.producers.open_transactions().values()
        return min([self.high_watermark, *firsts])

    # -- write path ---------------------------------------------------------
    def validate(self, data: bytes) -> list[tuple[records.BatchHeader, memoryview]]:
        """Split and check produced bytes; raise the error a Kafka broker would return."""
        limit = self.config["max.message.bytes"]
        try:
            batches = records.split_batches(data)
            checked = [(records.validate(b), b) for b in batches]
        except records.CorruptRecordError as e:
            raise KafkaError(ErrorCode.corrupt_message, str(e)) from None
        if not checked:
            raise KafkaError(ErrorCode.corrupt_message, "The produce request carried no record batch.")
        for header, batch in checked:
            if len(batch) > limit:
                raise KafkaError(ErrorCode.message_too_large,
                                 f"Record batch of {len(batch)} bytes exceeds max.message.bytes={limit}.")
            if header.is_control:
                raise KafkaError(ErrorCode.invalid_record, "Clients may not write control records.")
        return checked

    def append_produced(self, data: bytes) -> AppendInfo:
        """Append a producer's records as leader; de-duplicates retried idempotent batches."""
        checked = self.validate(data)
        if len(checked) == 1:  # the common case; a retry is always a single batch per partition
            dup = self.producers.check(checked[0][0])
            if isinstance(dup, Duplicate):
                return AppendInfo(dup.base_offset, -1, self.log_start_offset, dup.base_offset)
        else:
            for header, _ in checked:
                self.producers.check(header)
        return self.append_batches([b for _, b in checked], [h for h, _ in checked])

    def append_batches(self, batches: list, headers: list | None = None, *, as_leader: bool = True) -> AppendInfo:
        """Append checked batches (also used for control records and internal topics)."""
        headers = headers or [records.BatchHeader.parse(b) for b in batches]
        result = self.log.append(batches, append_time_ms=now_ms())
        offset = result.base_offset
        for header in headers:  # the log gave them consecutive offsets from base_offset
            self.producers.record(dataclasses.replace(header, base_offset=offset))
            offset += header.last_offset_delta + 1
        if as_leader:
            self.advance_high_watermark(self.log.log_end_offset)
        return AppendInfo(result.base_offset, result.log_append_time, result.log_start_offset, result.last_offset)

    def advance_high_watermark(self, offset: int) -> None:
        if offset > self.log.high_watermark:
            self.log.high_watermark = offset
            self.notify()

    # -- read path ----------------------------------------------------------
    def read(self, offset: int, max_bytes: int, *, committed_only: bool = False) -> bytes:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise KafkaError(ErrorCode.offset_out_of_range,
                             f"Offset {offset} is outside {self.topic}-{self.index}'s log "
                             f"[{self.log_start_offset}, {self.log_end_offset}].")
        limit = self.last_stable_offset if committed_only else self.high_watermark
        if offset >= limit:
            return b""
        return self.log.read(offset, max_bytes, max_offset=limit)

    def aborted_transactions(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of aborted transactions overlapping [start, end)."""
        return []

    # -- waiting for data (Fetch long poll) ----------------------------------
    def waiter(self) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        return fut

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
