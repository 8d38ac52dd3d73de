"""The coordinator's only I/O: ``__consumer_offsets`` on the local broker.

Kafka creates the internal topic on first need (the first FindCoordinator), with
``offsets.topic.num.partitions`` partitions, compaction, and small segments so the
cleaner can run. The coordinator appends records to the partition of a group through
the partition leader's write path (so followers replicate them like any data) and, on
becoming leader, reads the partition back from its log start to rebuild its state.

``MemoryOffsetsTopic`` has the same interface without a broker, for unit tests.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass

from .. import records
from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..replica.peers import LocalReplicas
from .offsets import SEGMENT_BYTES, TOPIC

REPLICATION_TIMEOUT = datetime.timedelta(seconds=5)  # offsets.commit.timeout.ms


@dataclass(frozen=True)
class Entry:
    """One record read back: data (maybe transactional) or a transaction marker."""

    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    transactional: bool = False
    marker: int | None = None  # records.CONTROL_COMMIT / CONTROL_ABORT for control records


def _batch(entries: list[tuple[bytes, bytes | None]], producer_id: int, producer_epoch: int,
           transactional: bool) -> bytes:
    ts = now_ms()
    recs = [records.Record(i, ts, key, value) for i, (key, value) in enumerate(entries)]
    return records.build_batch(recs, producer_id=producer_id, producer_epoch=producer_epoch,
                               transactional=transactional)


def _entries(batch: bytes | memoryview) -> Iterator[Entry]:
    header = records.BatchHeader.parse(batch)
    for r in records.iter_records(batch):
        marker = records.parse_control_key(r.key) if header.is_control else None
        yield Entry(r.key, r.value, header.producer_id, header.is_transactional, marker)


class OffsetsTopic:
    """``__consumer_offsets`` as seen from the coordinator's own broker."""

    def __init__(self, replicas: LocalReplicas):
        self.replicas = replicas

    @property
    def num_partitions(self) -> int:
        info = self.replicas.metadata.topics.get(TOPIC)
        return len(info.partitions) if info else self.replicas.config["offsets.topic.num.partitions"]

    def ensure(self) -> None:
        """Create ``__consumer_offsets`` if no one has yet (Kafka does it on first need)."""
        if TOPIC in self.replicas.metadata.topics:
            return
        self.replicas.create_internal_topic(TOPIC, self.replicas.config["offsets.topic.num.partitions"],
                                            {"cleanup.policy": "compact", "segment.bytes": SEGMENT_BYTES})

    def exists(self) -> bool:
        return TOPIC in self.replicas.metadata.topics

    def leader(self, index: int) -> int:
        """The broker leading one partition (-1: none, or the topic is gone)."""
        info = self.replicas.metadata.topics.get(TOPIC)
        if info is None or index >= len(info.partitions):
            return -1
        return info.partitions[index].leader

    def topic_exists(self, name: str) -> bool:
        return name in self.replicas.metadata.topics

    def partition_counts(self) -> dict[str, int]:
        """Every topic and its partition count (what server-side assignors divide, KIP-848)."""
        return {name: len(t.partitions) for name, t in self.replicas.metadata.topics.items()}

    def append(self, index: int, entries: list[tuple[bytes, bytes | None]], producer_id: int = -1,
               producer_epoch: int = -1, transactional: bool = False) -> int:
        """Append one batch as leader; return the offset after it (what replication must reach)."""
        part = self.replicas.leader_replica(TOPIC, index)
        info = part.append_batches([_batch(entries, producer_id, producer_epoch, transactional)])
        return info.last_offset + 1

    async def replicated(self, index: int, end_offset: int) -> None:
        part = self.replicas.leader_replica(TOPIC, index)
        await part.wait_for_replicas(end_offset, REPLICATION_TIMEOUT)

    def read(self, index: int) -> Iterator[Entry]:
        part = self.replicas.local_replica(TOPIC, index)
        if part is None:
            return
        for _header, batch in part.log.batches(part.log_start_offset):
            yield from _entries(batch)


class MemoryOffsetsTopic:
    """``OffsetsTopic`` without a broker: every partition led by ``node_id``, kept in lists."""

    def __init__(self, num_partitions: int = 50, node_id: int = 1, topics: set[str] | None = None):
        self.num_partitions, self.node_id = num_partitions, node_id
        self.logs: dict[int, list[Entry]] = {}
        self.leaders: dict[int, int] = {}
        self.topics = topics if topics is not None else set()
        self.partitions: dict[str, int] = {}  # topic -> partition count (1 when not given)
        self.created = False

    def ensure(self) -> None:
        self.created = True

    def exists(self) -> bool:
        return self.created

    def leader(self, index: int) -> int:
        return self.leaders.get(index, self.node_id)

    def topic_exists(self, name: str) -> bool:
        return name in self.topics

    def partition_counts(self) -> dict[str, int]:
        return {name: self.partitions.get(name, 1) for name in self.topics}

    def append(self, index: int, entries: list[tuple[bytes, bytes | None]], producer_id: int = -1,
               producer_epoch: int = -1,
               transactional: bool = False) -> int:
        if self.leader(index) != self.node_id:
            raise KafkaError(ErrorCode.not_leader_or_follower)
        log = self.logs.setdefault(index, [])
        log += [Entry(k, v, producer_id, transactional) for k, v in entries]
        return len(log)

    def mark(self, index: int, producer_id: int, commit: bool) -> None:
        kind = records.CONTROL_COMMIT if commit else records.CONTROL_ABORT
        self.logs.setdefault(index, []).append(Entry(None, None, producer_id, True, kind))

    async def replicated(self, index: int, end_offset: int) -> None:
        return None

    def read(self, index: int) -> Iterator[Entry]:
        yield from list(self.logs.get(index, []))
