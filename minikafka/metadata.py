"""Cluster metadata: which topics exist, their partitions, replicas, leaders and ISR.

In Apache Kafka this is the KRaft metadata log kept by the controller. Here it is one
object shared by the brokers of a ``Cluster`` (they run in one process), kept in the
data directory the way KRaft keeps it: a snapshot (``cluster-metadata.json``) plus a log
of changes since (``cluster-metadata.log``, one JSON record per line: a topic, a
partition's leader and ISR, a removed topic, a block of producer ids). A change costs
one short line, whatever the size of the cluster; when the log outgrows the snapshot a
new snapshot is written and the log starts again. Topic rules live here too: legal
names, the ``.``/``_`` collision, replica placement.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from dataclasses import asdict, dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from . import dynamic_config
from .config import BrokerConfig, ConfigError, TopicConfig, validate_topic_configs
from .errors import ErrorCode, KafkaError
from .security import store as security_store

MAX_TOPIC_NAME = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")  # used with fullmatch: "$" would allow a final "\n"
log = logging.getLogger("minikafka.metadata")

PRODUCER_ID_BLOCK = 1000
MAX_PARTITIONS = 10_000  # a guard against typos and fuzzers, far above any course need
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


@dataclass
class PartitionInfo:
    index: int
    replicas: list[int]
    leader: int
    isr: list[int]
    leader_epoch: int = 0
    adding_replicas: list[int] = field(default_factory=list)  # a reassignment in progress (KIP-455)
    removing_replicas: list[int] = field(default_factory=list)
    elr: list[int] = field(default_factory=list)  # eligible leader replicas (KIP-966): left the ISR below min ISR
    last_known_elr: list[int] = field(default_factory=list)  # ELR members that went offline
    partition_epoch: int = 0  # bumped by every change the quorum controller makes (KIP-497's AlterPartition)


@dataclass
class TopicInfo:
    name: str
    topic_id: str
    partitions: list[PartitionInfo]
    overrides: dict = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


def _topic_from_dict(t: dict) -> TopicInfo:
    fields = dict(t)
    parts = [PartitionInfo(**p) for p in fields.pop("partitions")]
    return TopicInfo(partitions=parts, **fields)


def check_topic_name(name: str) -> None:
    """Raise INVALID_TOPIC_EXCEPTION with the reason a name is not allowed."""
    if not name:
        raise KafkaError(ErrorCode.invalid_topic_exception, "A topic name cannot be empty.")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.invalid_topic_exception, f"A topic cannot be named {name!r}.")
    if len(name) > MAX_TOPIC_NAME:
        raise KafkaError(ErrorCode.invalid_topic_exception,
                         f"Topic name is {len(name)} characters long; the limit is {MAX_TOPIC_NAME}.")
    if not _LEGAL.fullmatch(name):
        raise KafkaError(ErrorCode.invalid_topic_exception,
                         f"Topic name {name!r} has characters other than letters, digits, '.', '_' and '-'.")


def collision_key(name: str) -> str:
    """Kafka's metric names turn '.' into '_', so 'a.b' and 'a_b' may not coexist."""
    return name.replace(".", "_")


class ClusterMetadata:
    """Topics and partition state, owned by the controller and read by every broker."""

    def __init__(self, config: BrokerConfig, path: Path | None = None, *,
                 sink: Callable[[dict], None] | None = None):
        self.static_config = config
        self.path = None if sink is not None else path  # the snapshot; the change log sits next to it
        self._sink = sink  # KRaft: each change goes to the metadata quorum instead of a file
        self.cluster_id = "minikafka-" + uuid.uuid4().hex[:12]
        self.controller_id = -1
        self.topics: dict[str, TopicInfo] = {}
        self._collisions: dict[str, str] = {}  # collision_key(name) -> name
        self._names_by_id: dict[str, str] = {}  # topic id -> name: requests name topics by id (Fetch 13+)
        self.brokers: dict[int, tuple[str, int]] = {}  # live brokers: id -> (host, port)
        self.racks: dict[int, str | None] = {}  # broker.rack of each broker (KIP-392)
        self.listener_endpoints: dict[str, dict[int, tuple[str, int]]] = {}  # listener name -> id -> address
        self.producer_id_block_end = 0  # ids below this were handed out before a restart
        self.group_configs: dict[str, dict[str, str]] = {}  # group id -> its settings (KIP-848, KIP-932)
        self._next_producer_id = 0
        self._journal: IO[str] | None = None
        self._journal_bytes = self._snapshot_bytes = 0
        self.end_offset = 0  # records written to the metadata log so far (KRaft's log end offset)
        self.controller_epoch = 0  # bumped by each controller change (the quorum leader epoch)
        self.broker_configs = dynamic_config.DynamicBrokerConfigs(self._append)  # KIP-226
        self.config = self.broker_configs.view(config)  # static settings under the cluster-wide dynamic ones
        self.security = security_store.SecurityRecords(self._append)  # ACLs and SCRAM credentials
        if path and path.exists():
            self._load()

    # -- persistence: a snapshot and the log of changes since ------------------------------
    @property
    def journal_path(self) -> Path | None:
        return self.path.with_suffix(".log") if self.path else None

    def _load(self) -> None:
        assert self.path is not None and self.journal_path is not None
        text = self.path.read_text()
        self._snapshot_bytes = len(text)
        data = json.loads(text)
        self.cluster_id = data["cluster_id"]
        self.producer_id_block_end = data.get("producer_id_block_end", 0)
        self.group_configs = data.get("group_configs", {})
        self.end_offset, self.controller_epoch = data.get("end_offset", 0), data.get("controller_epoch", 0)
        for t in data["topics"]:
            self._put_topic(_topic_from_dict(t))
        self.security.load_snapshot(data)
        self.broker_configs.load_snapshot(data)
        if self.journal_path.exists():
            text = self.journal_path.read_text()
            whole = text.rfind("\n") + 1
            if whole < len(text):  # a write cut short by a crash: cut it off, as Kafka truncates a torn log
                log.warning("%s ends in a partial record; truncating it", self.journal_path)
                os.truncate(self.journal_path, len(text[:whole].encode()))
            for number, line in enumerate(text[:whole].splitlines(), 1):
                self._journal_bytes += len(line) + 1
                self.end_offset += 1
                try:
                    self._replay(json.loads(line))
                except (ValueError, KeyError, TypeError) as e:
                    log.warning("%s line %d is unreadable (%s); ignoring it", self.journal_path, number, e)
        self._next_producer_id = self.producer_id_block_end

    def _replay(self, rec: dict) -> None:
        kind = rec["type"]
        if kind == "topic":
            self._put_topic(_topic_from_dict(rec["topic"]))
        elif kind == "partition":
            topic = self.topics.get(rec["topic"])
            info = PartitionInfo(**rec["partition"])
            if topic is not None and info.index < len(topic.partitions):
                topic.partitions[info.index] = info
        elif kind == "remove_topic":
            self._drop_topic(rec["name"])
        elif kind == "producer_ids":
            self.producer_id_block_end = rec["block_end"]
        elif kind == "leader_change":
            self.controller_epoch = rec["epoch"]
        elif kind in dynamic_config.RECORD_TYPES:
            self.broker_configs.replay(rec)
        elif kind == "group_config":
            self._put_group_configs(rec["group"], rec["configs"])
        elif kind in security_store.RECORD_TYPES:
            self.security.replay(rec)
        else:
            raise ValueError(f"unknown record type {kind!r}")

    def apply(self, rec: dict) -> None:
        """Apply one record made elsewhere (a replica of this state following the metadata log)."""
        self._replay(rec)
        self.end_offset += 1
        if rec["type"] == "producer_ids":
            self._next_producer_id = max(self._next_producer_id, self.producer_id_block_end)

    def reset(self) -> None:
        """Forget every replicated change (a KRaft controller about to reload the committed log).
        The mappings that others hold (the dynamic config layers) are emptied, not replaced."""
        for name in list(self.topics):
            self._drop_topic(name)
        self.producer_id_block_end = self._next_producer_id = 0
        self.group_configs.clear()
        for resource in self.broker_configs.snapshot()["broker_configs"]:
            self.broker_configs.replay({"resource": resource, "configs": {}})
        for acl in self.security.acls():
            self.security.replay({"type": "remove_acl", "acl": acl.to_record()})
        for user, mechanism in self.security.credentials():
            self.security.replay({"type": "remove_scram", "user": user, "mechanism": mechanism})
        self.end_offset = 0

    def snapshot_records(self) -> list[dict]:
        """Records that rebuild this state from nothing (what a KRaft snapshot holds)."""
        out: list[dict] = [{"type": "topic", "topic": asdict(t)} for t in self.topics.values()]
        if self.producer_id_block_end:
            out.append({"type": "producer_ids", "block_end": self.producer_id_block_end})
        out += [{"type": "group_config", "group": g, "configs": c} for g, c in self.group_configs.items()]
        configs = self.broker_configs.snapshot()["broker_configs"]
        out += [{"type": "broker_config", "resource": r, "configs": c} for r, c in configs.items()]
        security = self.security.snapshot()
        out += [{"type": "acl", "acl": acl} for acl in security["acls"]]
        out += [{"type": "scram", **cred} for cred in security["scram"]]
        return out

    def _append(self, rec: dict) -> None:
        self.end_offset += 1
        if self._sink is not None:
            self._sink(rec)
            return
        if not self.path:
            return
        line = json.dumps(rec, separators=(",", ":")) + "\n"
        if self._journal is None:
            assert self.journal_path is not None
            if not self.path.exists():
                self.save()
            self._journal = self.journal_path.open("a")
        self._journal.write(line)
        self._journal.flush()
        self._journal_bytes += len(line)
        if self._journal_bytes > max(1 << 20, 2 * self._snapshot_bytes):
            self.save()

    def save(self) -> None:
        """Write a whole snapshot and start an empty change log (a crash between the two
        replays changes the snapshot already holds: each record sets a whole state)."""
        if not self.path:
            return
        data = {"cluster_id": self.cluster_id, "producer_id_block_end": self.producer_id_block_end,
                "topics": [asdict(t) for t in self.topics.values()], "group_configs": self.group_configs,
                "end_offset": self.end_offset, "controller_epoch": self.controller_epoch,
                **self.security.snapshot(), **self.broker_configs.snapshot()}
        text = json.dumps(data, separators=(",", ":"))
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, self.path)
        self._snapshot_bytes = len(text)
        if self._journal is not None:
            self._journal.close()
        assert self.journal_path is not None
        self._journal = self.journal_path.open("w")
        self._journal_bytes = 0

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def topic_changed(self, topic: TopicInfo) -> None:
        """Record a topic's whole description (created, grown, or its settings altered)."""
        self._append({"type": "topic", "topic": asdict(topic)})

    def partition_changed(self, topic: str, info: PartitionInfo) -> None:
        """Record one partition's leader, epoch and ISR."""
        self._append({"type": "partition", "topic": topic, "partition": asdict(info)})

    def controller_changed(self, controller_id: int) -> None:
        """A new controller (KRaft's quorum leader): a new epoch, recorded as KRaft records a
        LeaderChangeMessage."""
        self.controller_id = controller_id
        self.controller_epoch += 1
        self._append({"type": "leader_change", "leader": controller_id, "epoch": self.controller_epoch})

    def broker_config(self, node_id: int) -> BrokerConfig:
        """What broker ``node_id`` reads: its own dynamic settings, the cluster-wide ones, the static ones."""
        return self.broker_configs.view(self.static_config, node_id)
    def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        """Record a group's whole settings (an empty dict removes them)."""
        self._put_group_configs(group_id, configs)
        self._append({"type": "group_config", "group": group_id, "configs": configs})

    def _put_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        if configs:
            self.group_configs[group_id] = dict(configs)
        else:
            self.group_configs.pop(group_id, None)

    def next_producer_id(self) -> int:
        """A producer id never handed out before, even across restarts (ids are saved in blocks)."""
        if self._next_producer_id >= self.producer_id_block_end:
            self.producer_id_block_end = self._next_producer_id + PRODUCER_ID_BLOCK
            self._append({"type": "producer_ids", "block_end": self.producer_id_block_end})
        self._next_producer_id += 1
        return self._next_producer_id - 1

    def allocate_producer_ids(self, count: int) -> int:
        """A block of ``count`` producer ids for one broker (KIP-730's AllocateProducerIds); its first id."""
        first = max(self.producer_id_block_end, self._next_producer_id)
        self.producer_id_block_end = self._next_producer_id = first + count
        self._append({"type": "producer_ids", "block_end": self.producer_id_block_end})
        return first

    # -- topics -------------------------------------------------------------
    def topic_config(self, name: str) -> TopicConfig:
        return TopicConfig(self.config, self.topics[name].overrides)

    def plan_topic(self, name: str, num_partitions: int, replication_factor: int,
                   configs: dict | None = None, assignment: dict[int, list[int]] | None = None) -> TopicInfo:
        """Check a CreateTopics request and return the topic it would create (not yet added)."""
        check_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.topic_already_exists, f"Topic {name!r} already exists.")
        clash = self._collisions.get(collision_key(name))
        if clash is not None:
            raise KafkaError(ErrorCode.invalid_topic_exception,
                             f"Topic {name!r} collides with existing topic {clash!r}: "
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

    def replace_topic_overrides(self, name: str, overrides: dict[str, Any], validate_only: bool = False) -> None:
        """A topic's settings become ``overrides`` (checked; recorded unless ``validate_only``)."""
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        parsed = validate_topic_configs(overrides)
        if not validate_only:
            topic.overrides.clear()
            topic.overrides.update(parsed)
            self.topic_changed(topic)

    def grow_topic(self, name: str, total: int, assignments: list[list[int]] | None = None,
                   validate_only: bool = False) -> TopicInfo:
        """CreatePartitions: grow ``name`` to ``total`` partitions, placed round-robin or as ``assignments``
        says (one replica list per new partition, leader first); recorded unless ``validate_only``."""
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Topic {name!r} does not exist.")
        if topic.internal:  # the group and transaction coordinators hash ids over this count
            raise KafkaError(ErrorCode.invalid_request,
                             f"The number of partitions of the internal topic {name} cannot change.")
        have = len(topic.partitions)
        if total <= have:
            raise KafkaError(ErrorCode.invalid_partitions,
                             f"Topic {name!r} has {have} partitions; the new count must be larger, not {total}.")
        rf = len(topic.partitions[0].replicas)
        if assignments is None:
            extra = self.place_replicas(total - have, rf, first_index=have)
        else:
            extra = self.assigned_partitions(assignments, have, total, rf)
        if not validate_only:
            topic.partitions.extend(extra)
            self.topic_changed(topic)
        return topic

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

    def _check_assignment(self, assignment: dict[int, list[int]], first_index: int = 0) -> list[PartitionInfo]:
        out = []
        for index in sorted(assignment):
            replicas = list(assignment[index])
            if not replicas or len(set(replicas)) != len(replicas) or any(b not in self.brokers for b in replicas):
                raise KafkaError(ErrorCode.invalid_replica_assignment,
                                 f"Partition {index}: replicas {replicas} must be distinct live brokers.")
            out.append(PartitionInfo(index, replicas, replicas[0], list(replicas)))
        if [p.index for p in out] != list(range(first_index, first_index + len(out))):
            raise KafkaError(ErrorCode.invalid_replica_assignment, "Partition numbers must run 0..N-1.")
        return out

    def assigned_partitions(self, assignments: list[list[int]], have: int, total: int,
                            replication_factor: int) -> list[PartitionInfo]:
        """CreatePartitions with explicit replicas: one list per new partition, each as long
        as the topic's replication factor, of distinct live brokers."""
        if len(assignments) != total - have:
            raise KafkaError(ErrorCode.invalid_replica_assignment,
                             f"{total - have} partitions are being added but {len(assignments)} "
                             "replica assignments were given.")
        if total > MAX_PARTITIONS:
            raise KafkaError(ErrorCode.invalid_partitions,
                             f"A topic may have at most {MAX_PARTITIONS} partitions here, not {total}.")
        out = []
        for index, replicas in enumerate(assignments, have):
            if len(replicas) != replication_factor:
                raise KafkaError(ErrorCode.invalid_replica_assignment,
                                 f"Partition {index}: {len(replicas)} replicas given; the topic's "
                                 f"replication factor is {replication_factor}.")
            out += self._check_assignment({index: replicas}, first_index=index)
        return out

    def _put_topic(self, topic: TopicInfo) -> None:
        old = self.topics.get(topic.name)
        if old is not None and old.topic_id != topic.topic_id:
            self._drop_topic(topic.name)
        self.topics[topic.name] = topic
        self._collisions[collision_key(topic.name)] = topic.name
        self._names_by_id[topic.topic_id] = topic.name

    def _drop_topic(self, name: str) -> TopicInfo | None:
        topic = self.topics.pop(name, None)
        if topic is not None:
            self._collisions.pop(collision_key(name), None)
            self._names_by_id.pop(topic.topic_id, None)
        return topic

    def add_topic(self, topic: TopicInfo) -> None:
        self._put_topic(topic)
        self.topic_changed(topic)

    def remove_topic(self, name: str) -> TopicInfo:
        topic = self._drop_topic(name)
        if topic is None:
            raise KeyError(name)
        self._append({"type": "remove_topic", "name": name})
        return topic

    def topic_by_id(self, topic_id: str) -> TopicInfo | None:
        topic = self.topics.get(self._names_by_id.get(topic_id, ""))
        if topic is not None and topic.topic_id == topic_id:
            return topic
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)  # not indexed: look
