"""Idempotent producer state of one partition (KIP-98).

For each producer id the leader remembers the epoch and the last few batches'
sequence ranges with the offsets they were written at. A retried batch (same
sequences) is acknowledged with its original offset instead of being written again;
a batch that skips ahead is refused with OUT_OF_ORDER_SEQUENCE_NUMBER; a batch from an
older epoch with INVALID_PRODUCER_EPOCH. The table is rebuilt from the log's batch
headers after a restart, so de-duplication survives it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..errors import ErrorCode, KafkaError
from ..records import NO_PRODUCER_ID, NO_SEQUENCE, BatchHeader

CACHED_BATCHES = 5  # Kafka keeps five: the most a producer has in flight


@dataclass
class _Entry:
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=CACHED_BATCHES))  # (first_seq, last_seq, base_offset)
    current_txn_first_offset: int = -1  # first offset of an open transaction, -1 if none

    @property
    def last_sequence(self) -> int:
        return self.batches[-1][1] if self.batches else NO_SEQUENCE


@dataclass(frozen=True)
class Duplicate:
    base_offset: int


class ProducerStateTable:
    def __init__(self) -> None:
        self.producers: dict[int, _Entry] = {}

    def check(self, h: BatchHeader) -> Duplicate | None:
        """Validate an incoming batch; return Duplicate if it was already written."""
        if h.producer_id == NO_PRODUCER_ID or h.base_sequence == NO_SEQUENCE:
            return None
        entry = self.producers.get(h.producer_id)
        if entry is None:
            return None  # unknown (new, or expired by retention): accept as Kafka 2.5+ does
        if h.producer_epoch < entry.epoch:
            raise KafkaError(ErrorCode.invalid_producer_epoch,
                             f"Producer {h.producer_id} epoch {h.producer_epoch} is older than {entry.epoch}.")
        if h.producer_epoch > entry.epoch:
            if h.base_sequence != 0:
                raise KafkaError(ErrorCode.out_of_order_sequence_number,
                                 f"A new epoch must start at sequence 0, not {h.base_sequence}.")
            return None
        for first, last, offset in entry.batches:
            if first == h.base_sequence and last == h.last_sequence:
                return Duplicate(offset)
        expected = (entry.last_sequence + 1) & 0x7FFFFFFF
        if h.base_sequence != expected:
            raise KafkaError(ErrorCode.out_of_order_sequence_number,
                             f"Producer {h.producer_id} sent sequence {h.base_sequence}; expected {expected}.")
        return None

    def record(self, h: BatchHeader) -> None:
        """Remember a batch that was appended (or read back from the log at recovery)."""
        if h.producer_id == NO_PRODUCER_ID:
            return
        entry = self.producers.get(h.producer_id)
        if entry is None or h.producer_epoch > entry.epoch:
            entry = self.producers[h.producer_id] = _Entry(h.producer_epoch)
        if h.is_control:
            entry.current_txn_first_offset = -1
            return
        if h.is_transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = h.base_offset
        if h.base_sequence != NO_SEQUENCE:
            entry.batches.append((h.base_sequence, h.last_sequence, h.base_offset))

    def fence(self, producer_id: int, epoch: int) -> None:
        """A newer epoch was issued: batches from older ones are refused from now on."""
        entry = self.producers.get(producer_id)
        if entry is None or epoch > entry.epoch:
            self.producers[producer_id] = _Entry(epoch)

    def open_transactions(self) -> dict[int, int]:
        """producer id -> first offset of its open transaction."""
        return {pid: e.current_txn_first_offset for pid, e in self.producers.items() if e.current_txn_first_offset >= 0}
