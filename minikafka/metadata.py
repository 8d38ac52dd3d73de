"""Cluster metadata: which topics exist, their partitions, replicas, leaders and ISR.

In Apache Kafka this is the KRaft metadata log kept by the controller. Here it is one
object shared by the brokers of a ``Cluster`` (they run in one process), saved as a
JSON file in the data directory so topics, their ids and their settings survive a
restart. Topic rules live here too: legal names, the ``.``/``_`` collision, replica
placement.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .config import BrokerConfig, ConfigError, TopicConfig, validate_topic_configs
from .errors import ErrorCode, KafkaError

MAX_TOPIC_NAME = 249
_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
PRODUCER_ID_BLOCK = 1000
MAX_PARTITIONS = 10_000  # a guard against typos and fuzzers, far above any course need
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")


@dataclass
class PartitionInfo:
    index: int
    replicas: list[int]
    leader: int
    isr: list[int]
    leader_epoch: int = 0


@dataclass
class TopicInfo:
    name: str
    topic_id: str
    partitions: list[PartitionInfo]
    overrides: dict = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


def check_topic_name(name: str) -> None:
    """Raise INVALID_TOPIC_EXCEPTION with the reason a name is not allowed."""
    if not name:
        raise KafkaError(ErrorCode.invalid_topic_exception, "A topic name cannot be empty.")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.invalid_topic_exception, f"A topic cannot be named {name!r}.")
    if len(name) > MAX_TOPIC_NAME:
        raise KafkaError(ErrorCode.invalid_topic_exception,
                         f"Topic name is {len(name)} characters long; the limit is {MAX_TOPIC_NAME}.")
    if not _LEGAL.match(name):
        raise KafkaError(ErrorCode.invalid_topic_exception,
                         f"Topic name {name!r} has characters other than letters, digits, '.', '_' and '-'.")


def collision_key(name: str) -> str:
    """Kafka's metric names turn '.' into '_', so 'a.b' and 'a_b' may not coexist."""
    return name.replace(".", "_")


class ClusterMetadata:
    """Topics and partition state, owned by the controller and read by every broker."""

    def __init__(self, config: BrokerConfig, path: Path | None = None):
        self.config = config
        self.path = path
        self.cluster_id = "minikafka-" + uuid.uuid4().hex[:12]
        self.controller_id = -1
        self.topics: dict[str, TopicInfo] = {}
        self.brokers: dict[int, tuple[str, int]] = {}  # live brokers: id -> (host, port)
        self.producer_id_block_end = 0  # ids below this were handed out before a restart
        self._next_producer_id = 0
        if path and path.exists():
            self._load()

    # -- persistence ------------------------------------------------------
    def _load(self) -> None:
        assert self.path is not None
        data = json.loads(self.path.read_text())
        self.cluster_id = data["cluster_id"]
        self.producer_id_block_end = self._next_producer_id = data.get("producer_id_block_end", 0)
        for t in data["topics"]:
            parts = [PartitionInfo(**p) for p in t.pop("partitions")]
            self.topics[t["name"]] = TopicInfo(partitions=parts, **t)

    def save(self) -> None:
        if not self.path:
            return
        data = {"cluster_id": self.cluster_id, "producer_id_block_end": self.producer_id_block_end,
                "topics": [asdict(t) for t in self.topics.values()]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, self.path)

    def next_producer_id(self) -> int:
        """A producer id never handed out before, even across restarts (ids are saved in blocks)."""
        if self._next_producer_id >= self.producer_id_block_end:
            self.producer_id_block_end = self._next_producer_id + PRODUCER_ID_BLOCK
            self.save()
        self._next_producer_id += 1
        return self._next_producer_id - 1

    # -- topics -------------------------------------------------------------
    def topic_config(self, name: str) -> TopicConfig:
        return TopicConfig(self.config, self.topics[name].overrides)

    def plan_topic(self, name: str, num_partitions: int, replication_factor: int,
                   configs: dict | None = None, assignment: dict[int, list[int]] | None = None) -> TopicInfo:
        """Check a CreateTopics request and return the topic it would create (not yet added)."""
        check_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.topic_already_exists, f"Topic {name!r} already exists.")
        clash = [t for t in self.topics if collision_key(t) == collision_key(name)]
        if clash:
            raise KafkaError(ErrorCode.invalid_topic_exception,
                             f"Topic {name!r} collides with existing topic {clash[0]!r}: "
                             "'.' and '_' are treated alike.")
        try:
            overrides = validate_topic_configs(configs or {})
        except ConfigError as e:
            raise KafkaError(ErrorCode.invalid_config, str(e)) from None
        if assignment:
            partitions = self._check_assignment(assignment)
        else:
            num_partitions = self.config["num.partitions"] if num_partitions == -1 else num_partitions
            if replication_factor == -1:
                replication_factor = self.config["default.replication.factor"]
            partitions = self.place_replicas(num_partitions, replication_factor)
        return TopicInfo(name, str(uuid.uuid4()), partitions, overrides)

    def place_replicas(self, count: int, replication_factor: int, first_index: int = 0) -> list[PartitionInfo]:
        """Spread leaders and followers round-robin over the live brokers, as Kafka does."""
        if count < 1:
            raise KafkaError(ErrorCode.invalid_partitions, f"Number of partitions must be at least 1, not {count}.")
        if first_index + count > MAX_PARTITIONS:
            raise KafkaError(ErrorCode.invalid_partitions,
                             f"A topic may have at most {MAX_PARTITIONS} partitions here, not {first_index + count}.")
        brokers = sorted(self.brokers)
        if replication_factor < 1 or replication_factor > len(brokers):
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             f"Replication factor {replication_factor} is impossible with {len(brokers)} "
                             f"available broker{'s' if len(brokers) != 1 else ''}.")
        out = []
        for i in range(first_index, first_index + count):
            replicas = [brokers[(i + r) % len(brokers)] for r in range(replication_factor)]
            out.append(PartitionInfo(i, replicas, replicas[0], list(replicas)))
        return out

    def _check_assignment(self, assignment: dict[int, list[int]]) -> list[PartitionInfo]:
        out = []
        for index in sorted(assignment):
            replicas = list(assignment[index])
            if not replicas or len(set(replicas)) != len(replicas) or any(b not in self.brokers for b in replicas):
                raise KafkaError(ErrorCode.invalid_replica_assignment,
                                 f"Partition {index}: replicas {replicas} must be distinct live brokers.")
            out.append(PartitionInfo(index, replicas, replicas[0], list(replicas)))
        if [p.index for p in out] != list(range(len(out))):
            raise KafkaError(ErrorCode.invalid_replica_assignment, "Partition numbers must run 0..N-1.")
        return out

    def add_topic(self, topic: TopicInfo) -> None:
        self.topics[topic.name] = topic
        self.save()

    def remove_topic(self, name: str) -> TopicInfo:
        topic = self.topics.pop(name)
        self.save()
        return topic

    def topic_by_id(self, topic_id: str) -> TopicInfo | None:
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)
