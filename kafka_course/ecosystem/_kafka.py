"""The few Kafka client calls the ecosystem tools share: make a topic, read one to its end.

Everything goes through confluent-kafka (librdkafka) with bounded waits, so the same
code runs on the embedded minikafka and on a real cluster.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ..client_logs import quiet


def position(msg: Message) -> tuple[int, int]:
    """(partition, offset) of a record a consumer returned: both are set on a record, unlike on an error event."""
    partition, offset = msg.partition(), msg.offset()
    assert partition is not None and offset is not None, msg.error()
    return partition, offset


def key_and_value(msg: Message) -> tuple[bytes, bytes]:
    """The key and value of a record of an internal topic, where both are always written."""
    key, value = msg.key(), msg.value()
    assert key is not None and value is not None, (key, value)
    return key, value


def admin(bootstrap: str) -> AdminClient:
    # log_level 4 keeps warnings and errors but not librdkafka's chatter when it is dropped.
    return AdminClient(quiet({"bootstrap.servers": bootstrap, "log_level": 4}))


def replication_factor(bootstrap: str, wanted: int = 3) -> int:
    """``wanted`` copies, or fewer on a cluster with fewer brokers (a one-broker minikafka)."""
    brokers = admin(bootstrap).list_topics(timeout=10).brokers
    return max(1, min(wanted, len(brokers)))


def ensure_topic(bootstrap: str, topic: str, partitions: int = 1, config: dict[str, Any] | None = None,
                 timeout: float = 15) -> None:
    """Create ``topic`` unless it exists; wait until every partition has a leader."""
    client = admin(bootstrap)
    if topic not in client.list_topics(timeout=timeout).topics:
        spec = NewTopic(topic, partitions, replication_factor(bootstrap),
                        config={k: str(v) for k, v in (config or {}).items()})
        try:
            client.create_topics([spec])[topic].result(timeout)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = client.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta and meta.error is None and meta.partitions and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.1)
    raise TimeoutError(f"topic {topic} has no leader for every partition after {timeout} s")


def partitions(bootstrap: str, topic: str) -> list[int]:
    meta = admin(bootstrap).list_topics(topic, timeout=10).topics[topic]
    if meta.error is not None:
        raise KafkaException(meta.error)
    return sorted(meta.partitions)


def reader(bootstrap: str, **config: Any) -> Consumer:
    """A consumer for ``assign()``: it never joins a group and never commits."""
    settings = {"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False, "enable.partition.eof": False}
    settings.update(config)
    return Consumer(quiet(settings))


def read_to_end(bootstrap: str, topic: str, start: dict[int, int] | None = None,
                timeout: float = 10) -> Iterator[Message]:
    """Every record from ``start`` (default: the beginning) up to the high watermarks seen now.

    Gives up after ``timeout`` seconds, having yielded what it could.
    """
    consumer = reader(bootstrap)
    try:
        ends = {}
        for p in partitions(bootstrap, topic):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            first = max(low, (start or {}).get(p, low))
            if first < high:
                ends[p] = (first, high)
        consumer.assign([TopicPartition(topic, p, first) for p, (first, _) in ends.items()])
        deadline = time.monotonic() + timeout
        while ends and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.2):
                partition, offset = msg.partition(), msg.offset()
                if msg.error() or partition is None or partition not in ends:
                    continue
                assert offset is not None  # a record (not an error) has its offset
                if offset < ends[partition][1]:
                    yield msg
                if offset + 1 >= ends[partition][1]:
                    del ends[partition]
            # A transaction marker takes the last offset but is never delivered: ask the position.
            for tp in consumer.position([TopicPartition(topic, p) for p in ends]):
                if tp.offset >= ends[tp.partition][1]:
                    del ends[tp.partition]
    finally:
        consumer.close()
