"""One share-partition: a topic partition as one share group consumes it (KIP-932).

A share-partition keeps a window of the log, ``[start offset, end offset)`` (Kafka's
SPSO and SPEO), in which every record is *in flight* with a state, a delivery count,
and, while acquired, the member holding it and when its acquisition lock expires.
Records below the start offset were all acknowledged or archived; records from the end
offset on were never delivered. ShareFetch acquires the available records of the
window first (redelivery) and then new ones from the log, which moves the end offset;
acknowledgements, lock timeouts and released sessions move records on as
``states.TRANSITIONS`` allows, and the start offset advances past every record that will
never be delivered again. ``group.share.partition.max.record.locks`` bounds the window.

This module is pure: no log, no socket, and an injected ``minikafka.clock.Clock``: an
acquisition lock expires at its monotonic milliseconds plus the lock duration, exactly
(a test moves a ``ManualClock`` past it). The
share-partition leader (``manager``) reads the log, calls it, and persists
``snapshot()`` in ``__share_group_state``; ``restore`` rebuilds it after a restart (a
lock does not survive a restart: acquired records come back available, their
delivery counts kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..clock import SYSTEM, Clock
from ..errors import ErrorCode, KafkaError
from .states import ACK_EVENTS, AckType, RecordState, next_state

S = RecordState


@dataclass
class InFlight:
    """One in-flight record."""

    state: RecordState = S.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline: int = 0  # monotonic ms on the share-partition's clock, while acquired

    def move(self, event: str) -> None:
        self.state = next_state(self.state, event)
        if self.state is not S.ACQUIRED:
            self.member_id, self.lock_deadline = None, 0


@dataclass(frozen=True)
class Acquired:
    """A run of offsets given to one member in one ShareFetch answer (AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class AckBatch:
    """Acknowledgements of ``[first_offset, last_offset]``: one type for all, or one per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]

    def type_of(self, offset: int) -> AckType:
        return AckType(self.types[0] if len(self.types) == 1 else self.types[offset - self.first_offset])


class SharePartition:
    def __init__(self, start_offset: int, delivery_count_limit: int = 5, max_record_locks: int = 2000,
                 clock: Clock = SYSTEM):
        self.start_offset = self.end_offset = start_offset
        self.records: dict[int, InFlight] = {}
        self.delivery_count_limit, self.max_record_locks = delivery_count_limit, max_record_locks
        self.clock = clock
        self.state_epoch = 0  # bumped when the state is rebuilt (Kafka's state epoch)

    # -- acquiring ------------------------------------------------------------------------
    def next_fetch_offset(self) -> int:
        """Where a fetch should read the log from: the first available record, else the end."""
        available = (o for o, r in self.records.items() if r.state is S.AVAILABLE)
        return min(available, default=self.end_offset)

    def acquire(self, member_id: str, batches: Iterable[tuple[int, int]], max_records: int,
                lock_duration_ms: int, record_limit: bool = False) -> list[Acquired]:
        """Acquire records of the given log batches (``(base offset, last offset)``) for a member.

        Available in-flight records are acquired again, records past the end offset for
        the first time. Whole batches are taken, so ``max_records`` may be passed to
        finish one (Kafka's batch-optimized mode), unless ``record_limit`` (KIP-1206's
        record-limit mode): then never more than ``max_records``, even mid-batch.
        Returns the acquired runs.
        """
        deadline, taken = self.clock.monotonic_ms() + lock_duration_ms, list[int]()
        for base, last in batches:
            if len(taken) >= max_records:
                break
            for offset in range(max(base, self.start_offset), last + 1):
                if record_limit and len(taken) >= max_records:
                    break
                record = self._acquirable(offset)
                if record is not None:
                    record.move("acquire")
                    record.delivery_count += 1
                    record.member_id, record.lock_deadline = member_id, deadline
                    taken.append(offset)
        return self._runs(taken)

    def archive_new(self, batches: Iterable[tuple[int, int]]) -> int:
        """Records never delivered (past the end offset) that must never be, e.g. of an aborted
        transaction under read_committed: archived as they enter the window. How many."""
        archived = 0
        for base, last in batches:
            for offset in range(max(base, self.end_offset, self.start_offset), last + 1):
                if offset - self.start_offset >= self.max_record_locks:
                    break
                self.records[offset] = InFlight(S.ARCHIVED)
                self.end_offset = offset + 1
                archived += 1
        if archived:
            self._advance_start()
        return archived

    def _acquirable(self, offset: int) -> InFlight | None:
        if offset < self.end_offset:
            record = self.records.get(offset)
            return record if record is not None and record.state is S.AVAILABLE else None
        if offset - self.start_offset >= self.max_record_locks:
            return None  # the window is full: group.share.partition.max.record.locks
        record = self.records[offset] = InFlight()
        self.end_offset = offset + 1
        return record

    def _runs(self, offsets: Sequence[int]) -> list[Acquired]:
        runs: list[Acquired] = []
        for offset in offsets:
            count = self.records[offset].delivery_count
            if runs and runs[-1].last_offset == offset - 1 and runs[-1].delivery_count == count:
                runs[-1] = Acquired(runs[-1].first_offset, offset, count)
            else:
                runs.append(Acquired(offset, offset, count))
        return runs

    # -- acknowledging ----------------------------------------------------------------------
    def acknowledge(self, member_id: str, batches: Sequence[AckBatch], renew_ms: int | None = None) -> None:
        """Apply a member's acknowledgements, all or none.

        INVALID_REQUEST for a malformed batch; INVALID_RECORD_STATE when a record is not
        held by this member (never acquired, acquired by another, or its lock expired).
        A Renew (KIP-1222) starts the record's acquisition lock again for ``renew_ms``;
        with ``renew_ms`` None the group does not allow renewing (INVALID_RECORD_STATE,
        as Kafka answers when ``share.renew.acknowledge.enable`` is false).
        """
        for batch in batches:
            self._check(member_id, batch)
            if renew_ms is None and AckType.RENEW in batch.types:
                raise KafkaError(ErrorCode.invalid_record_state,
                                 "This share group does not allow renewing acquisition locks "
                                 "(share.renew.acknowledge.enable is false).")
        for batch in batches:
            for offset in range(batch.first_offset, batch.last_offset + 1):
                kind = batch.type_of(offset)
                if kind is AckType.RENEW:
                    self.records[offset].lock_deadline = self.clock.monotonic_ms() + (renew_ms or 0)
                else:
                    self._finish(self.records[offset], ACK_EVENTS[kind])
        self._advance_start()

    def _check(self, member_id: str, batch: AckBatch) -> None:
        size = batch.last_offset - batch.first_offset + 1
        if size < 1 or len(batch.types) not in (1, size) or any(t not in AckType._value2member_map_
                                                                 for t in batch.types):
            raise KafkaError(ErrorCode.invalid_request,
                             f"Acknowledgement batch {batch.first_offset}-{batch.last_offset} is malformed.")
        if batch.first_offset < self.start_offset or batch.last_offset >= self.end_offset:
            raise KafkaError(ErrorCode.invalid_record_state,
                             f"Offsets {batch.first_offset}-{batch.last_offset} are not all in flight "
                             f"(the in-flight records are {self.start_offset}-{self.end_offset - 1}).")
        for offset in range(batch.first_offset, batch.last_offset + 1):
            record = self.records.get(offset)
            if record is None or record.state is not S.ACQUIRED or record.member_id != member_id:
                raise KafkaError(ErrorCode.invalid_record_state,
                                 f"Offset {offset} is not acquired by member {member_id}; it cannot be acknowledged.")

    def _finish(self, record: InFlight, event: str) -> None:
        """A held record is let go: ``event`` is accept, release, reject, gap or lock timeout."""
        if event in ("release", "lock timeout") and record.delivery_count >= self.delivery_count_limit:
            event += " at the delivery count limit"
        record.move(event)

    # -- locks and members ------------------------------------------------------------------------
    def expire_locks(self) -> int:
        """Records whose acquisition lock ran out become available again (or archived)."""
        now, expired = self.clock.monotonic_ms(), 0
        for record in self.records.values():
            if record.state is S.ACQUIRED and record.lock_deadline <= now:
                self._finish(record, "lock timeout")
                expired += 1
        if expired:
            self._advance_start()
        return expired

    def next_lock_deadline(self) -> int | None:
        return min((r.lock_deadline for r in self.records.values() if r.state is S.ACQUIRED), default=None)

    def release_member(self, member_id: str) -> int:
        """A member's share session closed: what it still holds is released."""
        held = [r for r in self.records.values() if r.state is S.ACQUIRED and r.member_id == member_id]
        for record in held:
            self._finish(record, "release")
        if held:
            self._advance_start()
        return len(held)

    # -- the window -------------------------------------------------------------------------------
    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            record = self.records.get(self.start_offset)
            if record is not None and not record.state.terminal:
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    def move_start_to(self, log_start_offset: int) -> None:
        """Retention deleted the log below ``log_start_offset``: those records are gone."""
        if log_start_offset <= self.start_offset:
            return
        for offset in [o for o in self.records if o < log_start_offset]:
            del self.records[offset]
        self.start_offset = log_start_offset
        self.end_offset = max(self.end_offset, log_start_offset)
        self._advance_start()

    def counts(self) -> dict[RecordState, int]:
        """How many in-flight records are in each state."""
        out = dict.fromkeys(RecordState, 0)
        for record in self.records.values():
            out[record.state] += 1
        return out

    # -- persistence ---------------------------------------------------------------------------------
    def snapshot(self) -> dict:
        """The durable state: offsets and runs of ``[first, last, state, delivery count]``.

        Acquired records are written as available: a lock does not outlive its broker.
        """
        runs: list[list[int]] = []
        for offset in sorted(self.records):
            record = self.records[offset]
            state = S.AVAILABLE if record.state is S.ACQUIRED else record.state
            if runs and runs[-1][1] == offset - 1 and runs[-1][2:] == [state, record.delivery_count]:
                runs[-1][1] = offset
            else:
                runs.append([offset, offset, int(state), record.delivery_count])
        return {"state_epoch": self.state_epoch, "start_offset": self.start_offset, "end_offset": self.end_offset,
                "batches": runs}

    @classmethod
    def restore(cls, snapshot: dict, delivery_count_limit: int = 5, max_record_locks: int = 2000,
                clock: Clock = SYSTEM) -> SharePartition:
        part = cls(int(snapshot["start_offset"]), delivery_count_limit, max_record_locks, clock)
        part.end_offset = max(part.start_offset, int(snapshot["end_offset"]))
        part.state_epoch = int(snapshot.get("state_epoch", 0)) + 1
        for first, last, state, count in snapshot["batches"]:
            for offset in range(max(first, part.start_offset), min(last + 1, part.end_offset)):
                part.records[offset] = InFlight(RecordState(state), count)
        part._advance_start()
        return part
