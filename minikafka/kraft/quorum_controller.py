"""A controller's state machine on top of Raft: it applies the committed metadata records.

``QuorumController`` is Kafka's QuorumController in miniature, sans I/O: the leader turns
BrokerRegistration and BrokerHeartbeat into metadata records (KIP-631) and appends them; every
controller applies records once the high watermark passes them. ``broker.session.timeout.ms``
(9000 by default in Kafka) is how long a broker may go without a heartbeat before the leader
fences it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..errors import ErrorCode
from .brokers import BrokerRegistry, HeartbeatTracker
from .raft import LEADER, RaftNode
from .records import FENCE_BROKER, REGISTER_BROKER, UNFENCE_BROKER, decode, metadata_record

SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


class QuorumController:
    def __init__(self, node: RaftNode, session_timeout_ms: int = SESSION_TIMEOUT_MS):
        self.node = node
        self.registry = BrokerRegistry()
        self.heartbeats = HeartbeatTracker(session_timeout_ms)
        self.intended_fenced: dict[int, bool] = {}  # appended by this leader, maybe not committed yet
        self._led_epoch = -1
        node.on_commit = self._apply_committed

    @property
    def is_active(self) -> bool:
        return self.node.state == LEADER

    def _apply_committed(self, high_watermark: int) -> None:
        """Apply every record below the high watermark that is not applied yet."""
        while self.registry.applied_offset + 1 < high_watermark:
            data = self.node.log.read(self.registry.applied_offset + 1, 1)
            if not data:
                return
            progressed = False
            for record in decode(data):
                if self.registry.applied_offset < record.offset < high_watermark:
                    self.registry.apply(record)
                    progressed = True
            if not progressed:
                return

    def tick(self, now: int) -> None:
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
