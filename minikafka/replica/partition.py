"""One partition replica on one broker: its log, its high watermark, its producers.

The leader's write path lives here: split the produced bytes into batches, check each
(CRC, size limit, idempotent sequence), stamp them with the leader epoch, append them,
and wake the fetches waiting for data. Consumers read up to the high watermark (or the
last stable offset for ``read_committed``), never past it. The leader also tracks how
far each follower has fetched (``FollowerState``): the high watermark is the smallest
log end offset in the ISR. The replica rules of ``acks=all`` live here too: the
``min.insync.replicas`` check before a write, waiting for the ISR to copy it, and the
check again when it completes (the ISR may have shrunk meanwhile). Which followers
leave or rejoin the ISR is decided in ``minikafka.replica.isr``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import struct
from dataclasses import dataclass, field

from .. import records
from ..clock import now_ms
from ..config import TopicConfig
from ..errors import ErrorCode, InvalidRecords, KafkaError
from ..log import PartitionLog
from ..metadata import PartitionInfo
from .epochs import LeaderEpochCache
from .producer_state import Duplicate, ProducerStateTable


@dataclass(frozen=True, slots=True)
class AppendInfo:
    base_offset: int
    log_append_time: int
    log_start_offset: int
    last_offset: int


@dataclass(slots=True)
class FollowerState:
    """What the leader knows of one follower: its log end offset, when it last caught up,
    and when it last fetched (a follower that stopped fetching never rejoins the ISR)."""

    log_end_offset: int = 0
    last_caught_up_ms: int = field(default_factory=now_ms)
    last_fetch_ms: int = 0


class Partition:
    def __init__(self, topic: str, info: PartitionInfo, log: PartitionLog, config: TopicConfig, node_id: int):
        self.topic, self.index, self.log, self.config = topic, info.index, log, config
        self.info, self.node_id = info, node_id  # info is the controller's record, shared
        self.producers = ProducerStateTable()
        self.epochs = LeaderEpochCache()
        self.followers: dict[int, FollowerState] = {}
        # followers this leader asked the controller to add to the ISR, answer not yet back: they
        # count for the high watermark at once (KIP-497's maximal ISR), for the controller may
        # already have made one of them leader. A request whose answer was lost (the controller
        # died, the link broke) may have been committed: its followers keep counting until the
        # metadata shows the partition past the epoch the request was made against.
        self.pending_isr: set[int] = set()
        self.pending_isr_epoch = -1  # the partition epoch the pending request was made against
        self.needs_truncation = True  # a follower checks divergence before its first fetch
        self.aborted: list[tuple[int, int, int]] = []  # (producer id, first offset, marker offset)
        self._waiters: list[asyncio.Future] = []
        self._rebuild_state()
        log.high_watermark = log.log_end_offset

    def _rebuild_state(self) -> None:
        """Producer state, leader epochs and aborted transactions, from the log itself."""
        self.producers, self.epochs, self.aborted = ProducerStateTable(), LeaderEpochCache(), []
        for header, batch in self.log.batches(self.log.log_start_offset):
            self._observe(header, batch)

    def _observe(self, header: records.BatchHeader, batch: bytes | memoryview) -> None:
        """Account for one batch that is now in the log (appended, replicated or recovered)."""
        if header.is_control and header.is_transactional:
            first = self.producers.open_transactions().get(header.producer_id, -1)
            key = next(records.iter_records(batch)).key
            if records.parse_control_key(key) == records.CONTROL_ABORT and first >= 0:
                self.aborted.append((header.producer_id, first, header.base_offset))
        self.producers.record(header)
        self.epochs.assign(header.partition_leader_epoch, header.base_offset)

    # -- offsets and role ---------------------------------------------------------
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
    def leader_epoch(self) -> int:
        return self.info.leader_epoch

    @property
    def is_leader(self) -> bool:
        return self.info.leader == self.node_id

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the oldest open transaction, or the high watermark."""
        firsts = self.producers.open_transactions().values()
        return min([self.high_watermark, *firsts])

    # -- write path ---------------------------------------------------------------
    def validate(self, data: bytes) -> list[tuple[records.BatchHeader, memoryview]]:
        """Split and check produced bytes; raise the error a Kafka broker would return."""
        limit = self.config["max.message.bytes"]
        try:
            checked = [(records.validate(b), b) for b in records.split_batches(data)]
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
            if header.compression != records.COMPRESSION_NONE or self.config.compacted:
                self._check_records(batch)
        return checked

    def _check_records(self, batch: bytes | memoryview) -> None:
        """Look inside the batch, as Kafka's log validator does: compressed records must
        decompress (within a bound) and parse, and a compacted topic needs a key on each."""
        try:
            recs = list(records.iter_records(batch))
        except records.DecompressedTooLarge as e:
            raise KafkaError(ErrorCode.message_too_large, f"Record batch refused: {e}.") from None
        except records.CorruptRecordError as e:
            raise KafkaError(ErrorCode.corrupt_message, f"Record batch refused: {e}.") from None
        if self.config.compacted:
            keyless = [i for i, r in enumerate(recs) if r.key is None]
            if keyless:
                message = f"Compacted topic {self.topic} cannot accept a record without a key."
                raise InvalidRecords(message, [(i, message) for i in keyless])

    def append_produced(self, data: bytes) -> AppendInfo:
        """Append a producer's records as leader; de-duplicates retried idempotent batches."""
        checked = self.validate(data)
        for header, _ in checked:
            dup = self.producers.check(header)
            if isinstance(dup, Duplicate) and len(checked) == 1:
                return AppendInfo(dup.base_offset, -1, self.log_start_offset, dup.base_offset)
        return self.append_batches([b for _, b in checked], [h for h, _ in checked])

    def append_batches(self, batches: list, headers: list | None = None) -> AppendInfo:
        """Append checked batches as leader (also control records and internal topics)."""
        headers = headers or [records.BatchHeader.parse(b) for b in batches]
        epoch = self.leader_epoch
        stamped = [records.with_leader_epoch(bytes(b), epoch) for b in batches]
        self.epochs.assign(epoch, self.log_end_offset)
        result = self.log.append(stamped, append_time_ms=now_ms())
        offset = result.base_offset
        for header, batch in zip(headers, stamped):  # the log gave them consecutive offsets
            self._observe(dataclasses.replace(header, base_offset=offset, partition_leader_epoch=epoch), batch)
            offset += header.last_offset_delta + 1
        self.notify()  # followers fetch what is new, even before the high watermark moves
        self.update_high_watermark()
        return AppendInfo(result.base_offset, result.log_append_time, result.log_start_offset, result.last_offset)

    def append_replicated(self, data: bytes) -> None:
        """A follower appends what it fetched from the leader, offsets and epochs unchanged."""
        batches = records.split_batches(data, allow_partial=True)
        if not batches:
            return
        self.log.append(batches, assign_offsets=False)
        for b in batches:
            self._observe(records.BatchHeader.parse(b), b)

    def write_marker(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int = 0) -> int:
        """Leader: end a producer's transaction here with a COMMIT or ABORT control record."""
        kind = records.CONTROL_COMMIT if commit else records.CONTROL_ABORT
        value = struct.pack(">hi", 0, coordinator_epoch)
        batch = records.build_batch([records.Record(0, now_ms(), records.control_record_key(kind), value)],
                                    producer_id=producer_id, producer_epoch=producer_epoch,
                                    transactional=True, control=True)
        return self.append_batches([batch]).base_offset

    # -- replication state ----------------------------------------------------------
    def update_high_watermark(self) -> None:
        """Leader: the high watermark is the smallest log end offset in the ISR. With eligible
        leader replicas (KIP-966, "strict min ISR") it does not move while the ISR is smaller than
        min.insync.replicas: an acks=1 write is accepted and stays invisible to consumers, so every
        replica that left the ISR meanwhile still holds all that consumers saw, and may lead."""
        if not self.is_leader:
            return
        if self.pending_isr and self.info.partition_epoch > self.pending_isr_epoch:
            self.pending_isr = set()  # the committed state says what became of the request
        if self.strict_min_isr and len(self.info.isr) < self.config["min.insync.replicas"]:
            return
        ends = [self.log_end_offset]
        ends += [self.followers.setdefault(b, FollowerState()).log_end_offset
                 for b in set(self.info.isr) | self.pending_isr if b != self.node_id]
        self.set_high_watermark(min(ends))

    @property
    def strict_min_isr(self) -> bool:
        return self.config.broker["eligible.leader.replicas.version"] >= 1

    def set_high_watermark(self, offset: int) -> None:
        offset = min(offset, self.log_end_offset)
        if offset > self.log.high_watermark:
            self.log.high_watermark = offset
            self.notify()
        elif offset < self.log.high_watermark and not self.is_leader:
            self.log.high_watermark = offset

    def restart_at(self, offset: int) -> None:
        """Follower: empty the log and start it again at ``offset`` (the leader's log start)."""
        self.log.reset_to(offset)
        self._rebuild_state()

    def truncate_to(self, offset: int) -> None:
        """Follower: cut the log at ``offset``; epochs starting there go too, even with no batch (a
        former leader's epoch it wrote nothing in), so the next fetch names the last epoch kept."""
        if offset < self.log_end_offset:
            self.log.truncate_to(offset)
            self._rebuild_state()
        else:
            self.epochs.truncate_from(offset)
        self.log.high_watermark = min(self.log.high_watermark, self.log_end_offset)

    # -- acks=all: the ISR and min.insync.replicas ---------------------------------------
    def check_min_insync(self) -> None:
        """acks=all is refused when the ISR is smaller than min.insync.replicas."""
        need = self.config["min.insync.replicas"]
        if len(self.info.isr) < need:
            raise KafkaError(ErrorCode.not_enough_replicas,
                             f"{self.topic}-{self.index} has {len(self.info.isr)} in-sync replica(s); "
                             f"min.insync.replicas={need}.")

    async def wait_for_replicas(self, offset: int, timeout: datetime.timedelta) -> None:
        """Wait until the high watermark reaches ``offset`` (every ISR member has it).

        As in Kafka, the ISR is checked again when the write completes, and whenever it changes
        meanwhile: below ``min.insync.replicas`` the write is on the leader but not acknowledged
        (with eligible leader replicas the high watermark would not reach it before the ISR grows).
        """
        loop = asyncio.get_running_loop()
        deadline, epoch = loop.time() + timeout.total_seconds(), self.leader_epoch
        while self.high_watermark < offset:
            self._check_still_leader(epoch)
            if self.strict_min_isr:
                self._check_isr_after_append()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise KafkaError(ErrorCode.request_timed_out,
                                 f"{self.topic}-{self.index}: the in-sync replicas did not copy the write in time.")
            waiter = self.waiter()
            try:  # asyncio.wait, not wait_for: Python 3.11's wait_for can swallow a cancellation
                await asyncio.wait([waiter], timeout=remaining)
            finally:
                waiter.cancel()
        self._check_still_leader(epoch)
        self._check_isr_after_append()

    def _check_still_leader(self, epoch: int) -> None:
        """A write waiting for the ISR fails when this replica stops leading, as Kafka's delayed
        produce does: as a follower it may truncate the write, and its high watermark (the new
        leader's) says nothing about it. The client retries with the new leader, whose producer
        state says whether the batch is already there."""
        if not self.is_leader or self.leader_epoch != epoch:
            raise KafkaError(ErrorCode.not_leader_or_follower,
                             f"Broker {self.node_id} stopped leading {self.topic}-{self.index} before the write "
                             f"reached the in-sync replicas.")

    def _check_isr_after_append(self) -> None:
        need = self.config["min.insync.replicas"]
        if len(self.info.isr) < need:
            raise KafkaError(ErrorCode.not_enough_replicas_after_append,
                             f"{self.topic}-{self.index}: the ISR shrank to {len(self.info.isr)} before the write "
                             f"completed; min.insync.replicas={need}.")

    # -- read path ------------------------------------------------------------------
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
        return [(pid, first) for pid, first, last in self.aborted if last >= start and first < end]

    # -- waiting for data (Fetch long poll, follower fetchers) -----------------------
    def waiter(self) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        return fut

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
