"""A tiny in-memory stand-in for a broker's topic and cluster-view ports (issue 27), for the unit
tests of the handlers that see only those ports: ``ClusterViewPort``, ``TopicsPort``,
``ReassignmentPort``, ``LogDirsPort``, ``QuorumPort``, ``SettingsPort`` and
``ConfigResourcesPort`` (``minikafka.handlers.ports``). No broker, socket or Cluster.

Its checks are a few of Kafka's, enough to give each handler the errors it must pass on:
INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_OR_PARTITION,
INVALID_TOPIC_EXCEPTION, OFFSET_OUT_OF_RANGE. Every call that changes something is recorded
in ``calls``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from minikafka.errors import ErrorCode, KafkaError

INTERNAL = ("__consumer_offsets", "__transaction_state", "__share_group_state")
BROKERS = {1: ("127.0.0.1", 9092), 2: ("127.0.0.1", 9093), 3: ("127.0.0.1", 9094)}


@dataclass
class FakePartition:
    index: int
    replicas: list[int]
    leader: int
    isr: list[int]
    leader_epoch: int = 0
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)


@dataclass
class FakeTopic:
    name: str
    topic_id: str
    partitions: list[FakePartition]

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL


class FakeCluster:
    """Brokers 1-3 on 127.0.0.1 (and on listener "EXTERNAL" at example.com), controller 1."""

    def __init__(self, auto_create: bool = True, deletion: bool = True) -> None:
        self.node_id = 1
        self.brokers = dict(BROKERS)
        self.listeners = {"EXTERNAL": {i: ("example.com", 19091 + i) for i in BROKERS}}
        self.racks: dict[int, str | None] = {1: "rack-a", 2: "rack-b"}
        self.auto_create_enabled, self.deletion = auto_create, deletion
        self.known: dict[str, FakeTopic] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.high_watermarks: dict[tuple[str, int], int] = {}
        self.errors: dict[tuple[str, int], ErrorCode] = {}  # what elect_leader / reassign_partition raise
        self.dirs: list[tuple[str, int, int, bool]] | None = None  # None: logs in memory
        self.placements: list[tuple[str | None, str, int, int, int, bool]] = []
        self.departed: dict[int, tuple[int, int]] = {}
        self.settings = {"transaction.version": 2, "eligible.leader.replicas.version": 1}
        self.groups = {"billing"}

    def add(self, name: str, partitions: int = 1, replication_factor: int = 1, leader: int | None = None) -> FakeTopic:
        parts = []
        for i in range(partitions):
            lead = leader or (i % 3) + 1
            replicas = [lead, *[b for b in (1, 2, 3) if b != lead]][:replication_factor]
            parts.append(FakePartition(i, replicas, lead, list(replicas)))
        topic = FakeTopic(name, str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), parts)
        self.known[name] = topic
        return topic

    # -- TopicLookupPort ----------------------------------------------------------------------
    def topics(self) -> dict[str, FakeTopic]:
        return self.known

    def topic_by_id(self, topic_id: str) -> FakeTopic | None:
        return next((t for t in self.known.values() if t.topic_id == topic_id), None)

    # -- ClusterViewPort ----------------------------------------------------------------------
    def live_brokers(self) -> dict[int, tuple[str, int]]:
        return self.brokers

    def broker_endpoints(self, listener: str | None) -> dict[int, tuple[str, int]]:
        if listener is None or listener not in self.listeners:
            return self.brokers
        return {i: a for i, a in self.listeners[listener].items() if i in self.brokers}

    def rack_of(self, node_id: int) -> str | None:
        return self.racks.get(node_id)

    def cluster_id(self) -> str:
        return "fake-cluster"

    def controller_id(self) -> int:
        return 1

    def validate_topic_name(self, name: str) -> None:
        if not name or name in (".", "..") or "/" in name:
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Bad topic name {name!r}.")

    def auto_create(self, name: str) -> FakeTopic | None:
        if name in self.known:
            return self.known[name]
        if not self.auto_create_enabled:
            return None
        self.calls.append(("auto_create", name))
        return self.add(name)

    # -- TopicsPort ---------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: dict[str, str | None],
                     assignment: dict[int, list[int]] | None, validate_only: bool) -> FakeTopic:
        self.validate_topic_name(name)
        if name in self.known:
            raise KafkaError(ErrorCode.topic_already_exists, f"Topic {name!r} already exists.")
        if assignment is not None:
            partitions, replication_factor = len(assignment), len(next(iter(assignment.values())))
        partitions = 1 if partitions == -1 else partitions
        replication_factor = 1 if replication_factor == -1 else replication_factor
        if partitions <= 0:
            raise KafkaError(ErrorCode.invalid_partitions, "Number of partitions must be larger than 0.")
        if not 0 < replication_factor <= len(self.brokers):
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             f"Replication factor {replication_factor} is larger than the 3 brokers.")
        self.calls.append(("create", name, partitions, replication_factor, configs, assignment, validate_only))
        if validate_only:
            return FakeTopic(name, str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
                             [FakePartition(i, [1] * replication_factor, 1, [1]) for i in range(partitions)])
        return self.add(name, partitions, replication_factor)

    def topic_settings(self, name: str) -> list[tuple[str, str | None, int]]:
        return [("cleanup.policy", "delete", 5), ("retention.ms", "1000", 1)]

    def topic_deletion_enabled(self) -> bool:
        return self.deletion

    def is_internal_topic(self, name: str) -> bool:
        return name in INTERNAL

    def delete_topic(self, name: str) -> None:
        if name not in self.known:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        self.calls.append(("delete", name))
        del self.known[name]

    def add_partitions(self, name: str, total: int, validate_only: bool,
                       assignments: list[list[int]] | None) -> None:
        topic = self.known.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        if total <= len(topic.partitions):
            raise KafkaError(ErrorCode.invalid_partitions, f"Topic {name!r} has {len(topic.partitions)} partitions.")
        self.calls.append(("grow", name, total, validate_only, assignments))

    def delete_records(self, topic: str, index: int, offset: int) -> int:
        if (topic, index) not in self.high_watermarks:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        hw = self.high_watermarks[topic, index]
        offset = hw if offset == -1 else offset
        if not 0 <= offset <= hw:
            raise KafkaError(ErrorCode.offset_out_of_range, f"Offset {offset} is past the high watermark {hw}.")
        self.calls.append(("delete_records", topic, index, offset))
        return offset

    # -- ReassignmentPort ---------------------------------------------------------------------
    def _check(self, topic: str, index: int) -> None:
        info = self.known.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        if (topic, index) in self.errors:
            raise KafkaError(self.errors[topic, index], "refused")

    def elect_leader(self, topic: str, index: int, unclean: bool) -> None:
        self._check(topic, index)
        self.calls.append(("elect", topic, index, unclean))

    def reassign_partition(self, topic: str, index: int, target: list[int] | None,
                           allow_replication_factor_change: bool) -> None:
        self._check(topic, index)
        self.calls.append(("reassign", topic, index, target, allow_replication_factor_change))

    # -- LogDirsPort --------------------------------------------------------------------------
    def log_dir_states(self) -> list[tuple[str, int, int, bool]] | None:
        return self.dirs

    def replica_placements(self) -> list[tuple[str | None, str, int, int, int, bool]]:
        return self.placements

    def alter_replica_log_dir(self, topic: str, index: int, path: str) -> None:
        if self.dirs is None or path not in {d[0] for d in self.dirs}:
            raise KafkaError(ErrorCode.log_dir_not_found, f"{path} is not a log directory of this broker.")
        self._check(topic, index)
        self.calls.append(("move", topic, index, path))

    # -- QuorumPort, SettingsPort, ConfigResourcesPort ----------------------------------------
    def controller_epoch(self) -> int:
        return 4

    def metadata_end_offset(self) -> int:
        return 120

    def quorum_voters(self) -> list[int]:
        return sorted({*self.brokers, *self.departed})

    def departed_voter(self, node_id: int) -> tuple[int, int] | None:
        return self.departed.get(node_id)

    def clock_ms(self) -> int:
        return 1_000_000

    def int_setting(self, name: str) -> int:
        return self.settings[name]

    def known_group_ids(self) -> set[str]:
        return self.groups
