"""``__share_group_state``: where share groups keep what must survive a restart (KIP-932).

Kafka keeps share-partition state in this compacted internal topic, written by its
share coordinator; minikafka keeps the same topic, with the same name, settings
(``share.coordinator.state.topic.*``) and compaction, but **with its own record format**:
keys and values are compact JSON (readable with ``minikafka dump-log``), not Kafka's
ShareSnapshot/ShareUpdate records, so a Kafka broker could not read this topic and
minikafka cannot read Kafka's. Two kinds of records:

    share-partition key  {"v":0,"type":"share_partition","group":G,"topic_id":UUID,"partition":P}
    share-partition value {"topic":NAME,"state_epoch":E,"start_offset":SPSO,"end_offset":SPEO,
                           "batches":[[first,last,state,delivery count],...]}
    share group key      {"v":0,"type":"share_group","group":G}
    share group value    {"group_epoch":N}    (a null value, a tombstone, deletes the group)

Each value is a whole snapshot, so compaction keeps exactly the latest one per key. A
key lives in partition ``abs(hashCode(key)) % share.coordinator.state.topic.num.partitions``
of ``"group:topic_id:partition"`` (or of the group id for a group record), as Kafka
places its share coordinator keys. The share-partition leader and the group coordinator
write through the leader of that partition, wherever it is (``Peers``), so its followers
replicate the state like any data, and read it back when they take over.

``MemoryStateStore`` has the same interface without a broker, for unit tests.
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Iterable, Iterator
from typing import Protocol

from .. import records
from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..groups.offsets import partition_for
from ..replica.partition import Partition
from ..replica.peers import LocalReplicas, Peers

TOPIC = "__share_group_state"
REPLICATION_TIMEOUT = datetime.timedelta(seconds=5)
log = logging.getLogger("minikafka.share")


def _json(value: dict) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def partition_key(group_id: str, topic_id: str, partition: int) -> bytes:
    return _json({"v": 0, "type": "share_partition", "group": group_id, "topic_id": topic_id,
                  "partition": partition})


def group_key(group_id: str) -> bytes:
    return _json({"v": 0, "type": "share_group", "group": group_id})


def encode(value: dict | None) -> bytes | None:
    return None if value is None else _json(value)


def decode(data: bytes | None) -> dict | None:
    return None if data is None else json.loads(data)


KINDS = ("share_partition", "share_group")
Parsed = tuple[dict, dict | None]  # a record's key and value, read


def parse(key: bytes, value: bytes | None) -> Parsed | None:
    """A record of the topic as (key, value); None, logged, for one that cannot be read
    (a damaged disk): one bad record must not keep the others from loading."""
    try:
        k, v = json.loads(key), decode(value)
        if isinstance(k, dict) and k.get("type") in KINDS and "group" in k and (v is None or isinstance(v, dict)):
            return k, v
    except (ValueError, UnicodeDecodeError):
        pass
    log.warning("skipping an unreadable record of %s (key %r)", TOPIC, key[:60])
    return None


def placement(key: bytes) -> str:
    """The string Kafka hashes to place a key: ``group:topic_id:partition``, or the group id."""
    k = json.loads(key)
    return f"{k['group']}:{k['topic_id']}:{k['partition']}" if k["type"] == "share_partition" else k["group"]


class StateStore(Protocol):
    def write(self, key: bytes, value: dict | None) -> tuple[Partition | None, int]: ...

    async def replicated(self, where: tuple[Partition | None, int]) -> None: ...

    def read(self, key: bytes) -> dict | None: ...

    def groups(self) -> dict[str, dict]: ...

    def share_partitions(self, group_id: str) -> dict[tuple[str, int], dict]: ...


class ShareStateTopic:
    """``__share_group_state`` reached from one broker."""

    def __init__(self, local: LocalReplicas, peers: Peers):
        self.local, self.peers = local, peers

    @property
    def num_partitions(self) -> int:
        info = self.local.metadata.topics.get(TOPIC)
        return len(info.partitions) if info else self.local.config["share.coordinator.state.topic.num.partitions"]

    def ensure(self) -> None:
        """Create the topic on first need, as Kafka's share coordinator does."""
        if TOPIC not in self.local.metadata.topics:
            config = self.local.config
            self.local.create_internal_topic(TOPIC, config["share.coordinator.state.topic.num.partitions"], {
                "cleanup.policy": "compact", "segment.bytes": config["share.coordinator.state.topic.segment.bytes"]})

    def _leader(self, index: int) -> Partition:
        info = self.local.metadata.topics[TOPIC].partitions[index]
        part = self.peers.leader_replica(TOPIC, info)
        if part is None:
            raise KafkaError(ErrorCode.coordinator_not_available,
                             f"{TOPIC}-{index} has no leader right now; the share state cannot be read or written.")
        return part

    def _index(self, key: bytes) -> int:
        return partition_for(placement(key), self.num_partitions)

    def write(self, key: bytes, value: dict | None) -> tuple[Partition | None, int]:
        """Append one record through the partition's leader; (that replica, offset after it)."""
        self.ensure()
        part = self._leader(self._index(key))
        batch = records.build_batch([records.Record(0, now_ms(), key, encode(value))])
        return part, part.append_batches([batch]).last_offset + 1

    async def replicated(self, where: tuple[Partition | None, int]) -> None:
        part, end = where
        if part is not None:
            try:
                await part.wait_for_replicas(end, REPLICATION_TIMEOUT)
            except KafkaError as e:  # written on the leader; followers will catch up
                log.warning("share state not yet on every in-sync replica: %s", e)

    def _entries(self, index: int) -> Iterator[tuple[bytes, Parsed]]:
        part = self._leader(index)
        for header, batch in part.log.batches(part.log_start_offset):
            if not header.is_control:
                for r in records.iter_records(batch):
                    parsed = parse(r.key, r.value) if r.key is not None else None
                    if parsed is not None:
                        yield r.key, parsed  # type: ignore[misc]

    def read(self, key: bytes) -> dict | None:
        """The latest value of ``key`` (None when absent or deleted)."""
        if TOPIC not in self.local.metadata.topics:
            return None
        latest = None
        for k, (_, value) in self._entries(self._index(key)):
            if k == key:
                latest = value
        return latest

    def _latest(self) -> dict[bytes, Parsed]:
        """The latest value of every key in the topic (what compaction would keep)."""
        if TOPIC not in self.local.metadata.topics:
            return {}
        return {key: parsed for index in range(self.num_partitions) for key, parsed in self._entries(index)}

    def groups(self) -> dict[str, dict]:
        """Every share group recorded (after a restart, so ListGroups still shows them)."""
        return groups_in(self._latest().values())

    def share_partitions(self, group_id: str) -> dict[tuple[str, int], dict]:
        """The state of each share-partition of a group, by (topic id, partition)."""
        return share_partitions_in(self._latest().values(), group_id)


class MemoryStateStore:
    """``ShareStateTopic`` without a broker: the latest value per key, and every write kept."""

    def __init__(self) -> None:
        self.values: dict[bytes, dict | None] = {}
        self.writes: list[tuple[bytes, dict | None]] = []

    def write(self, key: bytes, value: dict | None) -> tuple[Partition | None, int]:
        self.values[key] = json.loads(_json(value)) if value is not None else None
        self.writes.append((key, value))
        return None, len(self.writes)

    async def replicated(self, where: tuple[Partition | None, int]) -> None:
        return None

    def read(self, key: bytes) -> dict | None:
        return self.values.get(key)

    def groups(self) -> dict[str, dict]:
        return groups_in((json.loads(k), v) for k, v in self.values.items())

    def share_partitions(self, group_id: str) -> dict[tuple[str, int], dict]:
        return share_partitions_in(((json.loads(k), v) for k, v in self.values.items()), group_id)


def groups_in(latest: Iterable[Parsed]) -> dict[str, dict]:
    return {k["group"]: v for k, v in latest if k["type"] == "share_group" and v is not None}


def share_partitions_in(latest: Iterable[Parsed], group_id: str) -> dict[tuple[str, int], dict]:
    return {(str(k.get("topic_id")), int(k.get("partition", -1))): v for k, v in latest
            if k["type"] == "share_partition" and k["group"] == group_id and v is not None}
