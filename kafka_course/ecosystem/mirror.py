"""Mirroring between clusters as MirrorMaker 2 does it: renamed topics, offset syncs and checkpoints.

MirrorMaker 2 (KIP-382) is a set of Connect connectors. Between a cluster aliased
``primary`` and one aliased ``backup`` it does three things, all rebuilt here:

1. **Topic naming** (``DefaultReplicationPolicy``): ``orders`` on ``primary`` becomes
   ``primary.orders`` on ``backup``, so two clusters can mirror each other without copying
   records back and forth forever, and everyone can see where a topic came from.
2. **Offset syncs**: the offsets of the copy differ from the original (the source may have
   lost old records to retention, or hold transaction markers the copy does not have), so
   the source connector writes *offset syncs* (this upstream offset is that downstream
   offset) to ``mm2-offset-syncs.backup.internal`` on the source cluster: one when a
   partition starts, whenever the two drift apart, and every ``offset.lag.max`` records.
3. **Checkpoints**: the checkpoint connector reads the committed offsets of consumer groups
   on the source, translates each through the latest offset sync at or below it, and writes
   them to ``primary.checkpoints.internal`` on the target, where a group that fails over
   (``RemoteClusterUtils.translateOffsets``) finds where to resume on ``primary.orders``.

Translation is conservative, as in Kafka 3.5 and later (KAFKA-14666): an offset that is
exactly a synced upstream offset maps exactly; any other maps to one past the synced
downstream offset, so a group may read a few records again after failing over, but never
skips one. Both internal topics use MirrorMaker's binary layout (Kafka's protocol types:
a string is a 2-byte length and UTF-8 bytes), so Kafka's own tools could read them.
The mirror's own read position is kept in memory here (MirrorMaker keeps it in Connect's
offsets topic).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, Producer

from ..client_logs import quiet
from ._kafka import admin, ensure_topic, key_and_value, partitions, position, read_to_end


def records(bootstrap: str, topic: str, timeout: float = 10) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of ``topic`` on one cluster, as (partition, offset, key, value), in order."""
    found = read_to_end(bootstrap, topic, timeout=timeout)
    return sorted((*position(m), m.key(), m.value()) for m in found)


# -- MirrorMaker 2's record layouts --------------------------------------------------------------
def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def _read_string(data: bytes, at: int) -> tuple[str, int]:
    (size,) = struct.unpack_from(">h", data, at)
    return data[at + 2: at + 2 + size].decode(), at + 2 + size


@dataclass(frozen=True)
class OffsetSync:
    topic: str
    partition: int
    upstream: int
    downstream: int

    def record(self) -> tuple[bytes, bytes]:
        return (_string(self.topic) + struct.pack(">i", self.partition),
                struct.pack(">qq", self.upstream, self.downstream))

    @classmethod
    def parse(cls, key: bytes, value: bytes) -> OffsetSync:
        topic, at = _read_string(key, 0)
        return cls(topic, struct.unpack_from(">i", key, at)[0], *struct.unpack(">qq", value))


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  # the topic on the target cluster (renamed)
    partition: int
    upstream: int
    downstream: int
    metadata: str = ""

    def record(self) -> tuple[bytes, bytes]:
        key = _string(self.group) + _string(self.topic) + struct.pack(">i", self.partition)
        return key, struct.pack(">hqq", 0, self.upstream, self.downstream) + _string(self.metadata)  # version 0

    @classmethod
    def parse(cls, key: bytes, value: bytes) -> Checkpoint:
        group, at = _read_string(key, 0)
        topic, at = _read_string(key, at)
        _version, upstream, downstream = struct.unpack_from(">hqq", value, 0)
        return cls(group, topic, struct.unpack_from(">i", key, at)[0], upstream, downstream,
                   _read_string(value, 18)[0])


@dataclass
class MirrorReport:
    topic: str
    target_topic: str
    copied: int = 0
    # (partition, source offset) -> target offset, for every record copied in this round
    offsets: dict[tuple[int, int], int] = field(default_factory=dict)
    syncs: list[OffsetSync] = field(default_factory=list)  # the offset syncs this round emitted


def translate(syncs: list[OffsetSync], partition: int, upstream: int) -> int | None:
    """The downstream offset for ``upstream``, from the latest sync at or below it (None: no sync yet)."""
    below = [s for s in syncs if s.partition == partition and s.upstream <= upstream]
    if not below:
        return None
    sync = max(below, key=lambda s: s.upstream)
    return sync.downstream if sync.upstream == upstream else sync.downstream + 1


class MirrorMaker:
    def __init__(self, source: str, target: str, *, source_alias: str = "primary", target_alias: str = "backup",
                 offset_lag_max: int = 100):
        self.source, self.target = source, target
        self.source_alias, self.target_alias, self.offset_lag_max = source_alias, target_alias, offset_lag_max
        self.positions: dict[str, dict[int, int]] = {}  # topic -> partition -> next source offset
        self.last_sync: dict[tuple[str, int], tuple[int, int]] = {}

    def remote_topic(self, topic: str) -> str:
        """DefaultReplicationPolicy: the source cluster's alias, a dot, the topic."""
        return f"{self.source_alias}.{topic}"

    @property
    def offset_syncs_topic(self) -> str:  # on the source cluster
        return f"mm2-offset-syncs.{self.target_alias}.internal"

    @property
    def checkpoints_topic(self) -> str:  # on the target cluster
        return f"{self.source_alias}.checkpoints.internal"

    def mirror(self, topic: str, timeout: float = 15) -> MirrorReport:
        """Copy what ``topic`` gained since the last round; write the offset syncs that are due."""
        report = MirrorReport(topic, self.remote_topic(topic))
        ensure_topic(self.target, report.target_topic, len(partitions(self.source, topic)))
        producer = Producer(quiet({"bootstrap.servers": self.target, "enable.idempotence": True}))
        next_offsets = self.positions.setdefault(topic, {})
        for msg in read_to_end(self.source, topic, start=next_offsets, timeout=timeout):
            partition, offset = position(msg)
            producer.produce(report.target_topic, msg.value(), msg.key(), partition=partition,
                             timestamp=msg.timestamp()[1], headers=msg.headers(),
                             on_delivery=self._delivered(report, offset))
            next_offsets[partition] = offset + 1
            report.copied += 1
            producer.poll(0)
        if producer.flush(timeout):
            raise RuntimeError(f"mirroring {topic}: some records were not delivered to the target")
        for (p, upstream), downstream in sorted(report.offsets.items()):
            self._maybe_sync(report, p, upstream, downstream)
        self._write(self.source, self.offset_syncs_topic, [s.record() for s in report.syncs])
        return report

    @staticmethod
    def _delivered(report: MirrorReport, upstream: int) -> Callable[[KafkaError | None, Any], None]:
        # msg: a confluent Message, Any because its stubs make partition and offset optional (they are
        # unset on an error event); a delivered record has both
        def done(err: KafkaError | None, msg: Any) -> None:
            if err is None:
                report.offsets[(msg.partition(), upstream)] = msg.offset()
        return done

    def _maybe_sync(self, report: MirrorReport, partition: int, upstream: int, downstream: int) -> None:
        last = self.last_sync.get((report.topic, partition))
        if last is None or upstream - last[0] != downstream - last[1] or upstream - last[0] >= self.offset_lag_max:
            self.last_sync[(report.topic, partition)] = (upstream, downstream)
            report.syncs.append(OffsetSync(report.topic, partition, upstream, downstream))

    def _write(self, bootstrap: str, topic: str, items: list[tuple[bytes, bytes]]) -> None:
        ensure_topic(bootstrap, topic, 1, {"cleanup.policy": "compact"})
        producer = Producer(quiet({"bootstrap.servers": bootstrap}))
        for key, value in items:
            producer.produce(topic, value, key)
        if producer.flush(15):
            raise RuntimeError(f"could not write to {topic}")

    def offset_syncs(self, topic: str | None = None) -> list[OffsetSync]:
        """The offset syncs stored on the source cluster (for one topic, or all)."""
        found = [OffsetSync.parse(*key_and_value(m)) for m in read_to_end(self.source, self.offset_syncs_topic)]
        return [s for s in found if topic is None or s.topic == topic]

    def checkpoint(self, group: str) -> list[Checkpoint]:
        """Translate ``group``'s committed offsets on the source; write them to the target's checkpoints topic."""
        client = admin(self.source)
        committed = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
        syncs = self.offset_syncs()
        out = []
        for tp in committed.topic_partitions:
            if tp.offset < 0 or tp.topic not in self.positions:
                continue
            downstream = translate([s for s in syncs if s.topic == tp.topic], tp.partition, tp.offset)
            if downstream is not None:
                out.append(Checkpoint(group, self.remote_topic(tp.topic), tp.partition, tp.offset, downstream))
        self._write(self.target, self.checkpoints_topic, [c.record() for c in out])
        return out


def translate_offsets(target: str, source_alias: str, group: str) -> dict[tuple[str, int], int]:
    """Where ``group`` should resume on the target cluster: RemoteClusterUtils.translateOffsets."""
    latest: dict[tuple[str, int], int] = {}
    for msg in read_to_end(target, f"{source_alias}.checkpoints.internal"):
        checkpoint = Checkpoint.parse(*key_and_value(msg))
        if checkpoint.group == group:
            latest[(checkpoint.topic, checkpoint.partition)] = checkpoint.downstream
    return latest
