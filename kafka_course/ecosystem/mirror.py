"""Mirroring in miniature: what MirrorMaker 2 does between two clusters.

MirrorMaker 2 is a set of Kafka Connect connectors. Its source connector consumes topics
from one cluster and produces them to another, renaming each ``orders`` to
``<source alias>.orders`` so that two clusters can mirror each other without loops. Offsets
differ between the clusters, so it also records *offset syncs* (source offset -> target
offset) that let a consumer group fail over and resume at the right place.

``Mirror`` does the copying and the offset syncs for whole topics, partition by
partition, keeping keys, values, headers and timestamps. Call ``sync()`` again to copy
only what is new.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from confluent_kafka import Producer

from ._kafka import ensure_topic, partitions, read_to_end


def records(bootstrap: str, topic: str, timeout: float = 10) -> list[tuple[int, int, bytes, bytes]]:
    """Every record of ``topic`` on one cluster, as (partition, offset, key, value), in order."""
    found = read_to_end(bootstrap, topic, timeout=timeout)
    return sorted((m.partition(), m.offset(), m.key(), m.value()) for m in found)


@dataclass
class MirrorReport:
    topic: str
    target_topic: str
    copied: int = 0
    # (partition, source offset) -> target offset, for every record copied in this sync
    offset_syncs: dict[tuple[int, int], int] = field(default_factory=dict)


class Mirror:
    def __init__(self, source_bootstrap: str, target_bootstrap: str, *, source_alias: str = "source"):
        self.source, self.target, self.alias = source_bootstrap, target_bootstrap, source_alias
        self.positions: dict[str, dict[int, int]] = {}  # topic -> partition -> next source offset

    def target_topic(self, topic: str) -> str:
        """MirrorMaker 2's DefaultReplicationPolicy: prefix the source cluster's alias."""
        return f"{self.alias}.{topic}"

    def sync(self, topic: str, timeout: float = 15) -> MirrorReport:
        """Copy what ``topic`` gained since the last sync to the target cluster."""
        report = MirrorReport(topic, self.target_topic(topic))
        ensure_topic(self.target, report.target_topic, len(partitions(self.source, topic)))
        producer = Producer({"bootstrap.servers": self.target, "enable.idempotence": True})
        position = self.positions.setdefault(topic, {})

        def synced(err, msg, source_offset):
            if err is None:
                report.offset_syncs[(msg.partition(), source_offset)] = msg.offset()

        for msg in read_to_end(self.source, topic, start=position, timeout=timeout):
            producer.produce(report.target_topic, msg.value(), msg.key(), partition=msg.partition(),
                             timestamp=msg.timestamp()[1], headers=msg.headers(),
                             on_delivery=partial(synced, source_offset=msg.offset()))
            position[msg.partition()] = msg.offset() + 1
            report.copied += 1
            producer.poll(0)
        if producer.flush(timeout):
            raise RuntimeError(f"mirroring {topic}: some records were not delivered to the target")
        return report
