"""Small helpers the notebooks share: make a topic, fill it, read it back, measure lag.

Each helper is a few lines of ordinary client code (confluent-kafka for admin and
fast producing, kafka-python for reading), with every wait bounded by a timeout, so
a notebook cell always finishes. Nothing here is specific to minikafka.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec
from tqdm.auto import tqdm

from .client_logs import quiet
from .connection import current_bootstrap

if TYPE_CHECKING:
    from confluent_kafka import KafkaError

_admins: dict[str, AdminClient] = {}


@dataclass
class Message:
    """One record as a consumer sees it (or as a producer's delivery report confirms it)."""
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"Message(partition={self.partition}, offset={self.offset}, "
                f"key={_short(self.key)}, value={_short(self.value)})")


@dataclass(frozen=True)
class PartitionOffsets:
    partition: int
    log_start_offset: int  # the oldest offset still stored
    high_watermark: int  # the offset the next record will get (once replicated)

    @property
    def records(self) -> int:
        return self.high_watermark - self.log_start_offset


def _short(data: bytes | None, limit: int = 40) -> str:
    if data is None:
        return "None"
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _to_bytes(v: Any) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode()
    return json.dumps(v).encode()


def admin(bootstrap: str | None = None) -> AdminClient:
    """A confluent-kafka AdminClient for this address (one per address, reused)."""
    servers = bootstrap or current_bootstrap()
    if servers not in _admins:
        _admins[servers] = AdminClient(quiet({"bootstrap.servers": servers}))
    return _admins[servers]


def new_topic(name: str | None = None, partitions: int = 3, replication_factor: int = -1,
              config: dict[str, Any] | None = None, *, bootstrap: str | None = None,
              unique: bool = True, timeout: float = 15) -> str:
    """Create a topic and return its name.

    A short random suffix makes the name unique (``sales`` -> ``sales-3f2a1c``), so a
    notebook can run again without meeting the topic of its previous run. The default
    replication factor (-1) is the cluster's own ``default.replication.factor``: 1 on
    the embedded broker, 3 on the docker compose cluster, whose ``min.insync.replicas=2``
    would refuse ``acks=all`` writes to a single-replica topic.
    """
    topic = f"{name or 'demo'}-{uuid.uuid4().hex[:6]}" if unique else name
    if topic is None:
        raise ValueError("new_topic(unique=False) needs the topic's name.")
    client = admin(bootstrap)
    spec = NewTopic(topic, partitions, replication_factor, config={k: str(v) for k, v in (config or {}).items()})
    client.create_topics([spec])[topic].result(timeout)
    _wait_for_leaders(client, topic, partitions, timeout)
    return topic


def _wait_for_leaders(client: AdminClient, topic: str, partitions: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = client.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta and len(meta.partitions) == partitions and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.1)
    raise TimeoutError(f"topic {topic} has no leader for every partition after {timeout} s")


def delete_topic(topic: str, *, bootstrap: str | None = None, timeout: float = 15) -> None:
    admin(bootstrap).delete_topics([topic])[topic].result(timeout)


def producer(bootstrap: str | None = None, **config: Any) -> Producer:
    """A confluent-kafka Producer that partitions keys the way Java and kafka-python do.

    Settings use librdkafka's dotted names; pass them with underscores
    (``linger_ms=5`` becomes ``linger.ms``).
    """
    settings = {"bootstrap.servers": bootstrap or current_bootstrap(), "partitioner": "murmur2_random"}
    settings.update({k.replace("_", "."): v for k, v in config.items()})
    return Producer(quiet(settings))


def consumer(group: str, bootstrap: str | None = None, **config: Any) -> Consumer:
    """A confluent-kafka Consumer in ``group``, reading from the earliest offset when it has none.

    Settings use librdkafka's dotted names, passed with underscores, as for ``producer``.
    """
    settings = {"bootstrap.servers": bootstrap or current_bootstrap(), "group.id": group,
                "auto.offset.reset": "earliest"}
    settings.update({k.replace("_", "."): v for k, v in config.items()})
    return Consumer(quiet(settings))


def produce_demo(topic: str, n: int = 100, *, key: Any = None, value: Any = None,
                 headers: dict[str, str] | None = None, bootstrap: str | None = None,
                 progress: bool | None = None, timeout: float = 30, **config: Any) -> list[Message]:
    """Send ``n`` records and return them as the broker stored them (partition, offset).

    ``key`` and ``value`` are constants or functions of the record number ``i``; strings
    are UTF-8 encoded and other objects JSON encoded. Values default to ``"message i"``.
    """
    key_of = key if callable(key) else (lambda i: key)
    value_of = value if callable(value) else (lambda i: f"message {i}" if value is None else value)
    delivered: list[Message] = []
    errors: list[str] = []

    # msg: a confluent Message, Any because its stubs make topic, partition and offset optional (unset on
    # an error event) and type headers loosely; a delivered record has them all
    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            delivered.append(Message(msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value(),
                                    msg.timestamp()[1], list(msg.headers() or [])))

    p = producer(bootstrap, linger_ms=5, **config)
    for i in _progress(range(n), progress, n, f"producing to {topic}"):
        p.produce(topic, value=_to_bytes(value_of(i)), key=_to_bytes(key_of(i)),
                  headers=list((headers or {}).items()) or None, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(timeout)
    if errors or left:
        raise RuntimeError(f"{len(errors) + left} of {n} records were not delivered: {errors[:3]}")
    return sorted(delivered, key=lambda r: (r.partition, r.offset))


def _progress(items: Iterable, show: bool | None, total: int, desc: str) -> Iterable:
    if show is None:
        show = total >= 2000
    return tqdm(items, total=total, desc=desc, leave=False) if show else items


def partitions_of(topic: str, *, bootstrap: str | None = None) -> list[int]:
    meta = admin(bootstrap).list_topics(topic, timeout=10).topics[topic]
    if meta.error is not None:
        raise KafkaException(meta.error)
    return sorted(meta.partitions)


def offsets(topic: str, *, bootstrap: str | None = None, timeout: float = 10) -> list[PartitionOffsets]:
    """Log start offset and high watermark of every partition (ListOffsets, any broker)."""
    client = admin(bootstrap)
    tps = [TopicPartition(topic, p) for p in partitions_of(topic, bootstrap=bootstrap)]

    def ask(spec: OffsetSpec) -> dict[int, int]:
        futures = client.list_offsets({tp: spec for tp in tps}, request_timeout=timeout)
        return {tp.partition: f.result(timeout).offset for tp, f in futures.items()}
    starts, ends = ask(OffsetSpec.earliest()), ask(OffsetSpec.latest())
    return [PartitionOffsets(p, starts[p], ends[p]) for p in sorted(ends)]


def consume_all(topic: str, *, bootstrap: str | None = None, timeout: float = 10,
                progress: bool | None = None) -> list[Message]:
    """Read every record the topic holds right now, partition by partition.

    It reads from each partition's log start offset up to the high watermark seen when
    it starts, without a consumer group (nothing is committed), and gives up after
    ``timeout`` seconds, returning what it has.
    """
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    ends = offsets(topic, bootstrap=bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap or current_bootstrap(), group_id=None,
                             enable_auto_commit=False, auto_offset_reset="earliest")
    wanted = {KTopicPartition(topic, o.partition): o for o in ends if o.records > 0}
    out: list[Message] = []
    bar = tqdm(total=sum(o.records for o in ends), desc=f"reading {topic}", leave=False) \
        if (progress or (progress is None and sum(o.records for o in ends) >= 2000)) else None
    try:
        consumer.assign(list(wanted))
        for tp, o in wanted.items():
            consumer.seek(tp, o.log_start_offset)
        deadline = time.monotonic() + timeout
        while wanted and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=200, max_records=5000).items():
                end = wanted[tp].high_watermark if tp in wanted else -1
                fresh = [r for r in batch if r.offset < end]
                out += [Message(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp, list(r.headers or []))
                        for r in fresh]
                if bar:
                    bar.update(len(fresh))
            for tp in [tp for tp in wanted if consumer.position(tp) >= wanted[tp].high_watermark]:
                del wanted[tp]
                consumer.pause(tp)
    finally:
        consumer.close()
        if bar:
            bar.close()
    return sorted(out, key=lambda r: (r.partition, r.offset))


def committed(group: str, topic: str, *, bootstrap: str | None = None, timeout: float = 10) -> dict[int, int | None]:
    """The group's committed offset per partition (None where it never committed)."""
    client = admin(bootstrap)
    tps = [TopicPartition(topic, p) for p in partitions_of(topic, bootstrap=bootstrap)]
    request = ConsumerGroupTopicPartitions(group, tps)
    answer = client.list_consumer_group_offsets([request], request_timeout=timeout)[group].result(timeout)
    return {tp.partition: (tp.offset if tp.offset >= 0 else None) for tp in answer.topic_partitions}


def lag(group: str, topic: str, *, bootstrap: str | None = None) -> dict[int, int]:
    """How many records of each partition the group has not committed yet."""
    done = committed(group, topic, bootstrap=bootstrap)
    return {o.partition: o.high_watermark - max(o.log_start_offset, done.get(o.partition) or 0)
            for o in offsets(topic, bootstrap=bootstrap)}


def wait_until(condition: Callable[[], bool], timeout: float = 20, every: float = 0.1,
               what: str = "the condition") -> None:
    """Poll ``condition`` until it is true; raise TimeoutError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(every)
    raise TimeoutError(f"waited {timeout} s for {what}")
