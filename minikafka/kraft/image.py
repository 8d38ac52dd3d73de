"""The metadata image: what the committed records of ``__cluster_metadata`` say, applied in order.

Kafka's controllers and brokers both load the metadata log into an image (``MetadataImage``)
and hand each batch's changes to whoever cares as a delta (``MetadataDelta``). Here the image
is the pair of states the records build: the broker registrations (``BrokerRegistry``) and
the topic and partition metadata (``ClusterMetadata``, which the broker's request handlers
read). ``MetadataImage.apply`` takes any record, registrations, fencing and the leader-change
message included, and returns a ``MetadataDelta`` naming what changed: the broker process
opens replicas for new topics and tells partitions their new leader and ISR from it.

``ClusterMetadata.brokers``, ``racks`` and ``listener_endpoints`` (what Metadata answers
list) are the unfenced registrations, refreshed whenever a registration record is applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..metadata import ClusterMetadata
from ..records import Record
from .brokers import BrokerRegistry
from .records import (
    CHANGE_RECORDS,
    FENCE_BROKER,
    LEADER_CHANGE_MESSAGE,
    REGISTER_BROKER,
    UNFENCE_BROKER,
    MetadataRecord,
    change_record,
)


@dataclass
class MetadataDelta:
    """What one or more applied records changed."""

    topics: set[str] = field(default_factory=set)  # created or changed as a whole (TopicRecord)
    removed_topics: set[str] = field(default_factory=set)
    partitions: set[tuple[str, int]] = field(default_factory=set)  # (topic, index) with a new leader/ISR/epoch
    brokers: set[int] = field(default_factory=set)  # registered, fenced or unfenced
    fenced: set[int] = field(default_factory=set)  # fenced by these records
    unfenced: set[int] = field(default_factory=set)
    controller_changed: bool = False

    def merge(self, other: MetadataDelta) -> None:
        self.topics |= other.topics
        self.removed_topics |= other.removed_topics
        self.partitions |= other.partitions
        self.brokers |= other.brokers
        self.fenced |= other.fenced
        self.unfenced |= other.unfenced
        self.controller_changed |= other.controller_changed

    def __bool__(self) -> bool:
        return bool(self.topics or self.removed_topics or self.partitions or self.brokers or self.controller_changed)


class MetadataImage:
    """Registrations and cluster metadata, built by applying committed metadata records in order."""

    def __init__(
        self,
        registry: BrokerRegistry,
        metadata: ClusterMetadata,
        on_change: Callable[[MetadataDelta], None] | None = None,
    ):
        self.registry, self.metadata, self.on_change = registry, metadata, on_change

    @property
    def applied_offset(self) -> int:
        """The offset of the last record applied (-1: none)."""
        return self.registry.applied_offset

    def apply(self, record: MetadataRecord) -> MetadataDelta:
        """Apply one committed record (one already applied is skipped) and say what changed."""
        delta = MetadataDelta()
        if record.offset <= self.registry.applied_offset:
            return delta
        data = record.data
        if record.type in (REGISTER_BROKER, FENCE_BROKER, UNFENCE_BROKER):
            before = {b.broker_id: b.fenced for b in self.registry.brokers.values()}
            self.registry.apply(record)
            broker_id = data["brokerId"] if record.type == REGISTER_BROKER else data["id"]
            broker = self.registry.brokers.get(broker_id)
            if broker is not None and before.get(broker_id) != broker.fenced:
                (delta.fenced if broker.fenced else delta.unfenced).add(broker_id)
            delta.brokers.add(broker_id)
            self.refresh_brokers()
        else:
            self.registry.applied_offset = record.offset
            if record.type == LEADER_CHANGE_MESSAGE and "leaderId" in data:
                self.metadata.controller_id = data["leaderId"]
                self.metadata.controller_epoch = record.epoch
                delta.controller_changed = True
            elif record.type in CHANGE_RECORDS:
                self.metadata.apply(data)
                delta.merge(change_delta(data))
        self.metadata.end_offset = record.offset + 1
        if delta and self.on_change is not None:
            self.on_change(delta)
        return delta

    def apply_all(self, records: list[MetadataRecord]) -> MetadataDelta:
        delta = MetadataDelta()
        for record in records:
            delta.merge(self.apply(record))
        return delta

    def reset(self) -> None:
        """Back to nothing applied (before replaying the committed log from its start)."""
        self.registry.load([], 0)
        self.metadata.reset()
        self.refresh_brokers()

    def snapshot_records(self, now: int) -> list[Record]:
        """The records that rebuild this image from nothing (a snapshot's body, KIP-630)."""
        changes = [change_record(change, now) for change in self.metadata.snapshot_records()]
        return self.registry.snapshot_records(now) + changes

    def load_snapshot(self, records: list[MetadataRecord], end_offset: int) -> MetadataDelta:
        """Replace the image with a snapshot's, which covers every offset below ``end_offset``;
        the delta names every topic and broker of the snapshot."""
        self.registry.load([], 0)
        self.metadata.reset()
        delta = MetadataDelta()
        for i, record in enumerate(records):
            delta.merge(self.apply(MetadataRecord(i, record.epoch, record.type, record.data)))
        self.registry.applied_offset = end_offset - 1
        self.metadata.end_offset = end_offset
        self.refresh_brokers()
        return delta

    def refresh_brokers(self) -> None:
        """The metadata's broker addresses, racks and listeners: the unfenced registrations."""
        m = self.metadata
        m.brokers, m.racks, m.listener_endpoints = {}, {}, {}
        for b in sorted(self.registry.brokers.values(), key=lambda b: b.broker_id):
            if b.fenced:
                continue
            for i, listener in enumerate(b.listeners):
                address = (listener["host"], listener["port"])
                m.listener_endpoints.setdefault(listener["name"], {})[b.broker_id] = address
                if i == 0:
                    m.brokers[b.broker_id] = address
            if not b.listeners:
                m.brokers[b.broker_id] = ("", -1)
            m.racks[b.broker_id] = b.rack

    def unfenced(self) -> list[int]:
        return sorted(b.broker_id for b in self.registry.brokers.values() if not b.fenced)


def change_delta(change: dict) -> MetadataDelta:
    """What one ClusterMetadata change touches."""
    delta, kind = MetadataDelta(), change["type"]
    if kind == "topic":
        delta.topics.add(change["topic"]["name"])
    elif kind == "partition":
        delta.partitions.add((change["topic"], change["partition"]["index"]))
    elif kind == "remove_topic":
        delta.removed_topics.add(change["name"])
    return delta
