"""Brokers registered with the quorum, fenced and unfenced (KIP-631's broker lifecycle).

A broker registers (BrokerRegistration) and then heartbeats (BrokerHeartbeat) to the active
controller, the quorum's leader. The registration is a RegisterBrokerRecord in the metadata
log; the broker's epoch is that record's offset. A new broker is fenced: it may not lead
partitions until a heartbeat shows it is alive, which the leader records as an
UnfenceBrokerRecord. When its heartbeats stop for ``broker.session.timeout.ms`` the leader
writes a FenceBrokerRecord. Every controller applies the committed records in order, so any
of them can say which brokers are fenced; only the leader keeps heartbeat times (in memory,
as Kafka's BrokerHeartbeatManager does: a new leader starts every broker's clock afresh).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..records import Record
from .records import FENCE_BROKER, REGISTER_BROKER, UNFENCE_BROKER, MetadataRecord, metadata_record


@dataclass
class BrokerRegistration:
    broker_id: int
    broker_epoch: int
    incarnation_id: str
    listeners: list[dict[str, Any]] = field(default_factory=list)
    rack: str | None = None
    fenced: bool = True


class BrokerRegistry:
    """The registrations the committed metadata records make, applied in log order."""

    def __init__(self) -> None:
        self.brokers: dict[int, BrokerRegistration] = {}
        self.applied_offset = -1  # the last offset applied

    def apply(self, record: MetadataRecord) -> None:
        if record.offset <= self.applied_offset:
            return
        self.applied_offset = record.offset
        data = record.data
        if record.type == REGISTER_BROKER:
            self.brokers[data["brokerId"]] = BrokerRegistration(
                data["brokerId"],
                data["brokerEpoch"],
                data["incarnationId"],
                data.get("endPoints", []),
                data.get("rack"),
                fenced=True,
            )
        elif record.type in (FENCE_BROKER, UNFENCE_BROKER):
            broker = self.brokers.get(data["id"])
            if broker is not None and broker.broker_epoch == data["epoch"]:
                broker.fenced = record.type == FENCE_BROKER

    def snapshot_records(self, now: int) -> list[Record]:
        """The records that rebuild this state from nothing (a snapshot's body, KIP-630)."""
        out = []
        for b in self.brokers.values():
            out.append(
                metadata_record(
                    REGISTER_BROKER,
                    now,
                    brokerId=b.broker_id,
                    brokerEpoch=b.broker_epoch,
                    incarnationId=b.incarnation_id,
                    endPoints=b.listeners,
                    rack=b.rack,
                    fenced=True,
                )
            )
            if not b.fenced:
                out.append(metadata_record(UNFENCE_BROKER, now, id=b.broker_id, epoch=b.broker_epoch))
        return out

    def load(self, records: list[MetadataRecord], end_offset: int) -> None:
        """Replace the state with a snapshot's, which covers every offset below ``end_offset``."""
        self.brokers, self.applied_offset = {}, -1
        for record in records:
            self.apply(record)
        self.applied_offset = end_offset - 1

    def describe(self) -> list[dict[str, Any]]:
        return [asdict(b) for b in self.brokers.values()]


class HeartbeatTracker:
    """The leader's view of when each broker last heartbeat (monotonic milliseconds)."""

    def __init__(self, session_timeout_ms: int):
        self.session_timeout_ms = session_timeout_ms
        self.last_seen: dict[int, int] = {}

    def heard(self, broker_id: int, now: int) -> None:
        self.last_seen[broker_id] = now

    def expired(self, registry: BrokerRegistry, now: int) -> list[BrokerRegistration]:
        """Unfenced brokers silent for longer than the session timeout."""
        out = []
        for broker in registry.brokers.values():
            seen = self.last_seen.setdefault(broker.broker_id, now)
            if not broker.fenced and now - seen > self.session_timeout_ms:
                out.append(broker)
        return out
