"""Broker and topic settings, by Kafka's own names.

One table declares every setting minikafka understands: its type, its default, the
broker-level setting that supplies a topic's default (``log.retention.ms`` for
``retention.ms``), and a sentence for people. DescribeConfigs, the CLI and the course
read this table, so a setting is documented exactly once.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MiB = 1024 * 1024


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {v!r}")


def _list(v: Any) -> str:
    return ",".join(x.strip() for x in str(v).split(",") if x.strip())


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str  # "int", "long", "bool", "string", "list", "double"
    default: Any
    doc: str
    topic_name: str | None = None  # the per-topic setting this broker setting is the default of
    choices: tuple[str, ...] = ()

    def parse(self, value: Any) -> Any:
        converters: dict[str, Callable[[Any], Any]] = {
            "int": int, "long": int, "bool": _bool, "string": str, "list": _list, "double": float,
        }
        conv = converters[self.kind]
        try:
            out = conv(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{self.name} must be {self.kind_phrase}, not {value!r}") from None
        if self.choices:
            for item in (x for x in str(out).split(",") if x or self.kind != "list"):
                if item not in self.choices:
                    raise ConfigError(f"{self.name} must be one of {', '.join(self.choices)}, not {item!r}")
        return out

    @property
    def kind_phrase(self) -> str:
        return {"int": "a whole number", "long": "a whole number", "bool": "true or false",
                "string": "a string", "list": "a comma-separated list", "double": "a number"}[self.kind]


class ConfigError(ValueError):
    """A setting has an unknown name or a value of the wrong type."""


_DAY_MS = 24 * 3600 * 1000

BROKER_SETTINGS: tuple[Setting, ...] = (
    Setting("broker.id", "int", 1, "This broker's id in the cluster (minikafka serve: the first broker's id)."),
    Setting("node.id", "int", 1, "The KRaft name of broker.id."),
    Setting("connections.max.idle.ms", "long", 600_000, "Close a connection that has sent nothing for this long."),
    Setting("max.connections", "int", 2**31 - 1, "Most connections the broker keeps open; more are closed at once."),
    Setting("max.connections.per.ip", "int", 2**31 - 1, "Most connections from one address; more are closed at once."),
    Setting("num.partitions", "int", 1, "Partitions of an auto-created topic or of a CreateTopics request that gives -1."),
    Setting("default.replication.factor", "int", 1, "Replication factor of auto-created topics."),
    Setting("auto.create.topics.enable", "bool", True, "Create a topic when a client asks for its metadata or produces to it."),
    Setting("delete.topic.enable", "bool", True, "Allow DeleteTopics."),
    Setting("message.max.bytes", "int", 1048588, "Largest record batch the broker accepts.", "max.message.bytes"),
    Setting("log.retention.ms", "long", 7 * _DAY_MS, "Delete segments older than this (-1: keep forever).", "retention.ms"),
    Setting("log.retention.bytes", "long", -1, "Delete old segments when a partition grows past this (-1: no limit).", "retention.bytes"),
    Setting("log.segment.bytes", "int", 1024 * MiB, "Roll a new segment when the active one reaches this size.", "segment.bytes"),
    Setting("log.roll.ms", "long", 7 * _DAY_MS, "Roll a new segment when the active one is this old.", "segment.ms"),
    Setting("log.cleanup.policy", "list", "delete", "delete, compact, or both.", "cleanup.policy", ("delete", "compact")),
    Setting("log.cleaner.delete.retention.ms", "long", _DAY_MS, "How long tombstones survive compaction.", "delete.retention.ms"),
    Setting("log.cleaner.min.compaction.lag.ms", "long", 0, "Records younger than this are not compacted.", "min.compaction.lag.ms"),
    Setting("log.cleaner.min.cleanable.ratio", "double", 0.5, "Compact when this share of the log is dirty.", "min.cleanable.dirty.ratio"),
    Setting("log.index.interval.bytes", "int", 4096, "Bytes between entries of the offset index.", "index.interval.bytes"),
    Setting("log.message.timestamp.type", "string", "CreateTime", "CreateTime or LogAppendTime.", "message.timestamp.type", ("CreateTime", "LogAppendTime")),
    Setting("log.retention.check.interval.ms", "long", 300_000, "How often retention and compaction run."),
    Setting("min.insync.replicas", "int", 1, "Replicas that must have a write for acks=all to succeed.", "min.insync.replicas"),
    Setting("eligible.leader.replicas.version", "int", 1, "1: eligible leader replicas (KIP-966, a new Kafka 4.1+ "
            "cluster's default): the high watermark stops while the ISR is below min.insync.replicas, and replicas "
            "that left the ISR then stay electable. 0: Kafka before 4.1. (A feature level on Kafka: kafka-features.)",
            choices=("0", "1")),
    Setting("unclean.leader.election.enable", "bool", False, "Let an out-of-sync replica become leader (may lose data).", "unclean.leader.election.enable"),
    Setting("replica.lag.time.max.ms", "long", 30_000, "A follower that has not caught up for this long leaves the ISR."),
    Setting("replica.fetch.max.bytes", "int", 1_048_576, "A follower's Fetch asks for at most this many bytes of each partition (a first batch larger than this still comes whole)."),
    Setting("replica.fetch.response.max.bytes", "int", 10_485_760, "A follower's Fetch asks for at most this many bytes in all (a first batch larger than this still comes whole)."),
    Setting("replica.fetch.wait.max.ms", "int", 500, "How long a leader holds a follower's Fetch when it has less than replica.fetch.min.bytes to send."),
    Setting("replica.fetch.min.bytes", "int", 1, "The bytes a follower's Fetch waits for (up to replica.fetch.wait.max.ms) before the leader answers."),
    Setting("replica.fetch.backoff.ms", "int", 1_000, "How long a follower waits before fetching again from a leader it could not reach or that answered with an error."),
    Setting("replica.socket.timeout.ms", "int", 30_000, "A follower's Fetch that gets no answer within this time closes its connection (it reconnects on the next fetch)."),
    Setting("compression.type", "string", "producer", "Batches are kept as the producer compressed them.", "compression.type",
            ("producer", "none", "gzip", "snappy", "lz4", "zstd", "uncompressed")),
    Setting("group.initial.rebalance.delay.ms", "int", 3000, "Wait this long for more members before the first rebalance of an empty group."),
    Setting("group.min.session.timeout.ms", "int", 1000, "Smallest session timeout a member may ask for."),
    Setting("group.max.session.timeout.ms", "int", 1_800_000, "Largest session timeout a member may ask for."),
    Setting("group.consumer.session.timeout.ms", "int", 45_000, "Consumer-protocol groups (KIP-848): a member that sends no heartbeat for this long is removed."),
    Setting("group.consumer.heartbeat.interval.ms", "int", 5_000, "Consumer-protocol groups (KIP-848): how often members heartbeat (the broker tells them)."),
    Setting("group.consumer.assignors", "list", "uniform,range", "Consumer-protocol groups (KIP-848): the server-side assignors, the first one the default.",
            None, ("uniform", "range", "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
                   "org.apache.kafka.coordinator.group.assignor.RangeAssignor")),
    Setting("group.consumer.migration.policy", "string", "bidirectional",
            "Online migration between the classic and the consumer group protocols (KIP-848): which conversions of a "
            "group with members are allowed (upgrade: a ConsumerGroupHeartbeat joins a classic group; downgrade: the "
            "last consumer-protocol member leaves). Empty groups change protocol whatever this says.",
            None, ("bidirectional", "upgrade", "downgrade", "disabled")),
    Setting("broker.rack", "string", "", "This broker's rack (KIP-392); a list gives each broker of one process its own, in order."),
    Setting("replica.selector.class", "string", "", "Which replica a consumer should fetch from (KIP-392): empty for the leader, or "
            "org.apache.kafka.common.replica.RackAwareReplicaSelector for one in the consumer's rack (client.rack)."),
    Setting("offsets.retention.minutes", "int", 7 * 24 * 60, "Committed offsets of an empty group expire after this."),
    Setting("offsets.topic.num.partitions", "int", 50, "Partitions of __consumer_offsets."),
    Setting("offsets.topic.replication.factor", "int", 3,
            "Replicas of __consumer_offsets (at most as many as brokers are alive when it is created)."),
    Setting("transaction.max.timeout.ms", "int", 900_000, "Largest transaction timeout a producer may ask for."),
    Setting("transactional.id.expiration.ms", "int", 7 * _DAY_MS, "Forget an idle transactional id after this."),
    Setting("transaction.state.log.num.partitions", "int", 50, "Partitions of __transaction_state."),
    Setting("transaction.version", "int", 2, "2: transaction protocol v2 (KIP-890 part 2, a new Kafka 4.0+ "
            "cluster's default): a client that reads it adds partitions by writing to them and gets a new producer "
            "epoch at each EndTxn. 1: the classic protocol only. Older clients use the classic protocol either way. "
            "(A feature level on Kafka: kafka-features.)", choices=("1", "2")),
    Setting("transaction.state.log.replication.factor", "int", 3,
            "Replicas of __transaction_state (at most as many as brokers are alive when it is created)."),    # Share groups (KIP-932): a group's own setting (share.*, see minikafka.share.configs) wins over these.
    Setting("group.share.record.lock.duration.ms", "int", 30_000, "How long a share consumer holds an acquired record before it is offered again."),
    Setting("group.share.min.record.lock.duration.ms", "int", 15_000, "Smallest share.record.lock.duration.ms a group may set."),
    Setting("group.share.max.record.lock.duration.ms", "int", 60_000, "Largest share.record.lock.duration.ms a group may set."),
    Setting("group.share.delivery.count.limit", "int", 5, "A record delivered this many times without being accepted is archived."),
    Setting("group.share.partition.max.record.locks", "int", 2000, "Most in-flight records of one share-partition (its SPEO - SPSO)."),
    Setting("group.share.min.partition.max.record.locks", "int", 100, "Smallest share.partition.max.record.locks a group may set."),
    Setting("group.share.max.partition.max.record.locks", "int", 10_000, "Largest share.partition.max.record.locks a group may set."),
    Setting("group.share.session.timeout.ms", "int", 45_000, "A share group member that sends no heartbeat for this long is removed."),
    Setting("group.share.min.session.timeout.ms", "int", 45_000, "Smallest share.session.timeout.ms a group may set."),
    Setting("group.share.max.session.timeout.ms", "int", 60_000, "Largest share.session.timeout.ms a group may set."),
    Setting("group.share.heartbeat.interval.ms", "int", 5_000, "How often share group members send a heartbeat."),
    Setting("group.share.min.heartbeat.interval.ms", "int", 5_000, "Smallest share.heartbeat.interval.ms a group may set."),
    Setting("group.share.max.heartbeat.interval.ms", "int", 15_000, "Largest share.heartbeat.interval.ms a group may set."),
    Setting("group.share.max.size", "int", 200, "Most members of one share group."),
    Setting("group.share.max.share.sessions", "int", 2000, "Most share sessions one broker keeps (one per member and broker)."),
    Setting("share.coordinator.state.topic.num.partitions", "int", 50, "Partitions of __share_group_state."),
    Setting("share.coordinator.state.topic.replication.factor", "int", 3,
            "Replicas of __share_group_state (at most as many as brokers are alive when it is created)."),
    Setting("share.coordinator.state.topic.segment.bytes", "int", 100 * MiB, "Segment size of __share_group_state (small, so compaction can work)."),
    Setting("log.dirs", "list", "", "The broker's log directories, comma-separated; a new replica goes to the one holding fewest partitions."),
    Setting("leader.replication.throttled.rate", "long", 2**63 - 1, "Bytes per second a leader sends to the out-of-sync followers listed in a topic's leader.replication.throttled.replicas."),
    Setting("follower.replication.throttled.rate", "long", 2**63 - 1, "Bytes per second a follower fetches for the out-of-sync replicas listed in a topic's follower.replication.throttled.replicas."),
)

_BROKER = {s.name: s for s in BROKER_SETTINGS}

_LONG_MAX = 2**63 - 1
_NO_EFFECT = " Kept and described; minikafka gives it no effect."

# Every other topic setting Kafka accepts, so a configuration written for Kafka works here.
TOPIC_ONLY_SETTINGS: tuple[Setting, ...] = (
    Setting("max.compaction.lag.ms", "long", _LONG_MAX, "Longest a record may stay uncompacted."),
    Setting("message.timestamp.difference.max.ms", "long", _LONG_MAX,
            "Largest allowed difference between a record's timestamp and the broker's clock."),
    Setting("message.timestamp.before.max.ms", "long", _LONG_MAX,
            "How far in the past a record's timestamp may be." + _NO_EFFECT),
    Setting("message.timestamp.after.max.ms", "long", _LONG_MAX,
            "How far in the future a record's timestamp may be." + _NO_EFFECT),
    Setting("compression.gzip.level", "int", -1, "gzip level when the broker recompresses." + _NO_EFFECT),
    Setting("compression.lz4.level", "int", 9, "lz4 level when the broker recompresses." + _NO_EFFECT),
    Setting("compression.zstd.level", "int", 3, "zstd level when the broker recompresses." + _NO_EFFECT),
    Setting("file.delete.delay.ms", "long", 60_000, "Wait before deleting a removed segment's file." + _NO_EFFECT),
    Setting("flush.messages", "long", _LONG_MAX, "fsync after this many records (the OS flushes otherwise)." + _NO_EFFECT),
    Setting("flush.ms", "long", _LONG_MAX, "fsync after this long." + _NO_EFFECT),
    Setting("follower.replication.throttled.replicas", "list", "", "Replicas (partition:broker, or *) whose fetches follow the follower's follower.replication.throttled.rate while out of the ISR."),
    Setting("leader.replication.throttled.replicas", "list", "", "Replicas (partition:broker, or *) that send to out-of-sync followers within the leader's leader.replication.throttled.rate."),
    Setting("local.retention.bytes", "long", -2, "Local bytes kept with tiered storage (-2: retention.bytes)." + _NO_EFFECT),
    Setting("local.retention.ms", "long", -2, "Local time kept with tiered storage (-2: retention.ms)." + _NO_EFFECT),
    Setting("message.downconversion.enable", "bool", True, "Convert batches for old consumers." + _NO_EFFECT),
    Setting("preallocate", "bool", False, "Preallocate a new segment's file." + _NO_EFFECT),
    Setting("remote.storage.enable", "bool", False, "Tiered storage for this topic." + _NO_EFFECT),
    Setting("remote.log.copy.disable", "bool", False, "Stop copying segments to tiered storage." + _NO_EFFECT),
    Setting("remote.log.delete.on.disable", "bool", False, "Delete tiered segments when tiering is disabled." + _NO_EFFECT),
    Setting("segment.index.bytes", "int", 10 * MiB, "Largest size of a segment's offset index." + _NO_EFFECT),
    Setting("segment.jitter.ms", "long", 0, "Random time taken off segment.ms to spread rolls." + _NO_EFFECT),
)


def _topic_table() -> dict[str, Setting]:
    table = {}
    for s in BROKER_SETTINGS:
        if s.topic_name:
            table[s.topic_name] = Setting(s.topic_name, s.kind, s.default, s.doc, None, s.choices)
    for s in TOPIC_ONLY_SETTINGS:
        table[s.name] = s
    return table


TOPIC_SETTINGS: dict[str, Setting] = _topic_table()
TOPIC_TO_BROKER = {s.topic_name: s.name for s in BROKER_SETTINGS if s.topic_name}


class BrokerConfig:
    """The broker's settings: defaults overridden by server.properties and --config."""

    def __init__(self, overrides: Mapping[str, Any] | None = None):
        self.values: dict[str, Any] = {s.name: s.default for s in BROKER_SETTINGS}
        self.explicit: set[str] = set()
        self.dynamic: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # (source, values), most specific first
        for k, v in (overrides or {}).items():
            self.set(k, v)

    def layered(self, *dynamic: tuple[str, Mapping[str, Any]]) -> BrokerConfig:
        """These settings seen through dynamic layers (KIP-226), most specific first: a
        broker's own dynamic values, then the cluster-wide dynamic defaults. The layers are
        live mappings, so a later change is seen at once; the static values are shared."""
        view = copy.copy(self)
        view.dynamic = dynamic
        return view

    def set(self, name: str, value: Any) -> None:
        if name in _BROKER:
            self.values[name] = _BROKER[name].parse(value)
        elif name in TOPIC_TO_BROKER:  # a topic default given by its topic name
            self.set(TOPIC_TO_BROKER[name], value)
            return
        else:
            raise ConfigError(f"unknown broker setting {name!r}")
        self.explicit.add(name)

    def __getitem__(self, name: str) -> Any:
        for _, layer in self.dynamic:
            if name in layer:
                return layer[name]
        return self.values[name]

    def source(self, name: str) -> str:
        """Where a broker setting's value comes from, in DescribeConfigs' vocabulary."""
        return next((source for source, layer in self.dynamic if name in layer), None) or \
            ("STATIC_BROKER_CONFIG" if name in self.explicit else "DEFAULT_CONFIG")

    def synonyms(self, name: str) -> tuple[tuple[str, str, str], ...]:
        """Every place ``name`` has a value, most specific first: (name, value, source)."""
        out = [(name, render(layer[name]), source) for source, layer in self.dynamic if name in layer]
        if name in self.explicit:
            out.append((name, render(self.values[name]), "STATIC_BROKER_CONFIG"))
        return (*out, (name, render(_BROKER[name].default), "DEFAULT_CONFIG"))

    def topic_default(self, topic_setting: str) -> Any:
        broker_name = TOPIC_TO_BROKER.get(topic_setting)
        if broker_name:
            return self[broker_name]
        return TOPIC_SETTINGS[topic_setting].default


def validate_topic_configs(configs: Mapping[str, Any]) -> dict[str, Any]:
    """Parse per-topic overrides; raise ConfigError naming the bad one."""
    out = {}
    for k, v in configs.items():
        if k not in TOPIC_SETTINGS:
            raise ConfigError(f"unknown topic setting {k!r}")
        out[k] = TOPIC_SETTINGS[k].parse(v)
    return out


class TopicConfig(Mapping[str, Any]):
    """A topic's effective settings: its overrides, else the broker's defaults."""

    def __init__(self, broker: BrokerConfig, overrides: Mapping[str, Any] | None = None):
        self.broker = broker
        # Shared, not copied: an altered setting reaches every holder of this object.
        self.overrides: Any = overrides if overrides is not None else {}  # a dict, or a view of one

    def __getitem__(self, name: str) -> Any:
        if name in self.overrides:
            return self.overrides[name]
        return self.broker.topic_default(name)

    def __iter__(self) -> Iterator[str]:
        return iter(TOPIC_SETTINGS)

    def __len__(self) -> int:
        return len(TOPIC_SETTINGS)

    def source(self, name: str) -> str:
        """Where the value comes from, in DescribeConfigs' vocabulary."""
        if name in self.overrides:
            return "DYNAMIC_TOPIC_CONFIG"
        broker_name = TOPIC_TO_BROKER.get(name)
        return self.broker.source(broker_name) if broker_name else "DEFAULT_CONFIG"

    @property
    def compacted(self) -> bool:
        return "compact" in str(self["cleanup.policy"]).split(",")

    @property
    def deletes(self) -> bool:
        return "delete" in str(self["cleanup.policy"]).split(",")


def read_properties(path: str | Path) -> dict[str, str]:
    """Read a Java-style server.properties file (key=value, # comments)."""
    out = {}
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            raise ConfigError(f"{path}: line {raw!r} is not key=value")
        out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out


# DescribeConfigs vocabulary: where a value comes from, and its type.
SOURCE_CODES = {"DYNAMIC_TOPIC_CONFIG": 1, "DYNAMIC_BROKER_CONFIG": 2, "STATIC_BROKER_CONFIG": 4, "DEFAULT_CONFIG": 5,
                "DYNAMIC_GROUP_CONFIG": 8}
SOURCE_CODES.update({"DYNAMIC_DEFAULT_BROKER_CONFIG": 3, "DYNAMIC_BROKER_LOGGER_CONFIG": 6})
TYPE_CODES = {"bool": 1, "string": 2, "int": 3, "long": 5, "double": 6, "list": 7}


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None  # None: unset and without a default (advertised.listeners)
    source: str
    setting: Setting
    synonyms: tuple[tuple[str, str | None, str], ...] = ()  # (name, value, source), most specific first
    read_only: bool = False


def render(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def describe_topic(config: TopicConfig) -> list[ConfigEntry]:
    out = []
    for name, setting in TOPIC_SETTINGS.items():
        synonyms = []
        if name in config.overrides:
            synonyms.append((name, render(config.overrides[name]), "DYNAMIC_TOPIC_CONFIG"))
        broker_name = TOPIC_TO_BROKER.get(name)
        if broker_name:
            synonyms += config.broker.synonyms(broker_name)
        out.append(ConfigEntry(name, render(config[name]), config.source(name), setting, tuple(synonyms)))
    return out


def describe_broker(config: BrokerConfig) -> list[ConfigEntry]:
    """Every broker setting with its source and synonyms; those Kafka cannot change at run
    time are read-only (``DYNAMIC_BROKER_SETTINGS``)."""
    return [ConfigEntry(s.name, render(config[s.name]), config.source(s.name), s, config.synonyms(s.name),
                        read_only=s.name not in DYNAMIC_BROKER_SETTINGS)
            for s in BROKER_SETTINGS]


# The broker settings Kafka lets IncrementalAlterConfigs change at run time (KIP-226), per
# broker or cluster-wide; of minikafka's settings: the topic defaults, connection limits and
# the replication throttles.
DYNAMIC_BROKER_SETTINGS = frozenset({
    *(s.name for s in BROKER_SETTINGS if s.topic_name), "max.connections", "max.connections.per.ip",
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
})
