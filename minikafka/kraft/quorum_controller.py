"""A controller's state machine on top of Raft: it applies the committed metadata records.

``QuorumController`` is Kafka's QuorumController in miniature, sans I/O: the leader turns
BrokerRegistration and BrokerHeartbeat into metadata records (KIP-631) and appends them; every
controller applies records once the high watermark passes them. ``broker.session.timeout.ms``
(9000 by default in Kafka) is how long a broker may go without a heartbeat before the leader
fences it.

Every controller snapshots its state on its own (KIP-630) once
``metadata.log.max.record.bytes.between.snapshots`` of records have been applied since the
last snapshot, and then drops the log below it. A follower too far behind gets the leader's
snapshot with FetchSnapshot and loads it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..errors import ErrorCode
from . import snapshots
from .brokers import BrokerRegistry, HeartbeatTracker
from .raft import LEADER, RaftNode
from .records import FENCE_BROKER, REGISTER_BROKER, UNFENCE_BROKER, decode, metadata_record

SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms
SNAPSHOT_BYTES = 20 * 1024 * 1024  # metadata.log.max.record.bytes.between.snapshots


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


class QuorumController:
    def __init__(
        self,
        node: RaftNode,
        session_timeout_ms: int = SESSION_TIMEOUT_MS,
        snapshot_bytes: int = SNAPSHOT_BYTES,
        now: int = 0,
    ):
        self.node, self.snapshot_bytes, self._since_snapshot, self._now = node, snapshot_bytes, 0, now
        self.registry = BrokerRegistry()
        self.heartbeats = HeartbeatTracker(session_timeout_ms)
        self.intended_fenced: dict[int, bool] = {}  # appended by this leader, maybe not committed yet
        self._led_epoch = -1
        node.on_commit = self._apply_committed
        node.read_snapshot = self._read_snapshot
        node.on_snapshot = self._load_snapshot
        self._recover(now)

    def _recover(self, now: int) -> None:
        """At start: load the newest snapshot; the log starts where it ends."""
        directory = self.node.log.directory
        latest = snapshots.latest(directory) if directory is not None else None
        if latest is None or directory is None or latest[0] < self.node.log.start_offset:
            return
        if latest[0] > self.node.log.start_offset:  # a crash between writing it and cutting the log
            self.node.log.restart_at(*latest)
        self._load_snapshot(latest[0], latest[1], snapshots.read(directory, *latest) or b"")

    def _read_snapshot(self, end_offset: int, epoch: int) -> bytes | None:
        directory = self.node.log.directory
        return snapshots.read(directory, end_offset, epoch) if directory is not None else None

    def _load_snapshot(self, end_offset: int, epoch: int, data: bytes) -> None:
        directory = self.node.log.directory
        if directory is not None and not (directory / snapshots.file_name(end_offset, epoch)).exists():
            snapshots.write(directory, end_offset, epoch, data)
        self.registry.load(snapshots.records_of(data), end_offset)
        self._since_snapshot = 0

    def _maybe_snapshot(self, epoch: int, now: int) -> None:
        """Snapshot the applied state and drop the log below it, past the configured bytes."""
        directory, end = self.node.log.directory, self.registry.applied_offset + 1
        if directory is None or self._since_snapshot < self.snapshot_bytes or end <= self.node.log.start_offset:
            return
        data = snapshots.encode(self.registry.snapshot_records(now), end, epoch, now)
        snapshots.write(directory, end, epoch, data)
        self.node.log.restart_at(end, epoch)
        self._since_snapshot = 0

    @property
    def is_active(self) -> bool:
        return self.node.state == LEADER

    def _apply_committed(self, high_watermark: int) -> None:
        """Apply every record below the high watermark that is not applied yet."""
        while self.registry.applied_offset + 1 < high_watermark:
            data = self.node.log.read(self.registry.applied_offset + 1, 1)
            if not data:
                return
            progressed, epoch = False, -1
            for record in decode(data):
                if self.registry.applied_offset < record.offset < high_watermark:
                    self.registry.apply(record)
                    self._since_snapshot += len(str(record.data)) + len(record.type)
                    progressed, epoch = True, record.epoch
            if not progressed:
                return
            if self.registry.applied_offset + 1 == high_watermark:
                self._maybe_snapshot(epoch, self._now)

    def tick(self, now: int) -> None:
        self._now = now
        self.node.tick(now)
        if not self.is_active:
            return
        if self._led_epoch != self.node.epoch:  # a new term: every broker's session starts now
            self._led_epoch, self.intended_fenced = self.node.epoch, {}
            self.heartbeats.last_seen.clear()
        for broker in self.heartbeats.expired(self.registry, now):
            if not self.intended_fenced.get(broker.broker_id, broker.fenced):
                self._set_fenced(broker.broker_id, broker.broker_epoch, True, now)

    def _set_fenced(self, broker_id: int, broker_epoch: int, fenced: bool, now: int) -> None:
        kind = FENCE_BROKER if fenced else UNFENCE_BROKER
        self.node.append([metadata_record(kind, now, id=broker_id, epoch=broker_epoch)], now)
        self.intended_fenced[broker_id] = fenced

    def register(
        self, broker_id: int, incarnation_id: uuid.UUID | None, listeners: list[dict], rack: str | None, now: int
    ) -> tuple[ErrorCode, int]:
        """Append a RegisterBrokerRecord; the answer waits until its offset (the broker epoch) commits."""
        if not self.is_active:
            return ErrorCode.not_controller, -1
        known = self.registry.brokers.get(broker_id)
        if known is not None and known.incarnation_id == str(incarnation_id):
            return ErrorCode.none, known.broker_epoch  # the same broker asking again
        epoch = self.node.log.end_offset
        record = metadata_record(
            REGISTER_BROKER,
            now,
            brokerId=broker_id,
            brokerEpoch=epoch,
            incarnationId=str(incarnation_id),
            endPoints=listeners,
            rack=rack,
            fenced=True,
        )
        self.node.append([record], now)
        self.intended_fenced[broker_id] = True
        self.heartbeats.heard(broker_id, now)
        return ErrorCode.none, epoch

    def heartbeat(
        self, broker_id: int, broker_epoch: int, metadata_offset: int, want_fence: bool, want_shut_down: bool, now: int
    ) -> HeartbeatAnswer:
        """A live broker: unfence it (or fence it if it asks), and say what it is now."""
        if not self.is_active:
            return HeartbeatAnswer(ErrorCode.not_controller)
        broker = self.registry.brokers.get(broker_id)
        if broker is None:
            return HeartbeatAnswer(ErrorCode.broker_id_not_registered)
        if broker.broker_epoch != broker_epoch:
            return HeartbeatAnswer(ErrorCode.stale_broker_epoch)
        self.heartbeats.heard(broker_id, now)
        want = want_fence or want_shut_down
        if self.intended_fenced.get(broker_id, broker.fenced) != want:
            self._set_fenced(broker_id, broker_epoch, want, now)
        return HeartbeatAnswer(
            ErrorCode.none, metadata_offset >= broker.broker_epoch, broker.fenced, want_shut_down and broker.fenced
        )
