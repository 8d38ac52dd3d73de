"""Real consumers running in threads, and waiting for conditions with a deadline.

A group only rebalances while its members poll, so each consumer here polls in its
own thread, records what it received and what it was assigned, and (optionally)
commits after processing each batch, as an at-least-once consumer does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# Small timeouts keep rebalances fast: heartbeats every second, sessions of 6 s.
KAFKA_PYTHON_GROUP = dict(session_timeout_ms=6000, heartbeat_interval_ms=1000, max_poll_interval_ms=10000,
                          auto_offset_reset="earliest", request_timeout_ms=15000)
CONFLUENT_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "max.poll.interval.ms": 10000,
                   "auto.offset.reset": "earliest"}


def wait_until(condition: Callable[[], object], timeout: float = 30.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def produce(bootstrap: str, topic: str, count: int, partitions: int, prefix: str = "m") -> list[bytes]:
    """``count`` records spread evenly over the partitions (explicitly, not by key hash)."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    values = [f"{prefix}-{i}".encode() for i in range(count)]
    for i, value in enumerate(values):
        producer.send(topic, value, partition=i % partitions)
    producer.flush(30)
    producer.close()
    return values


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(15)


class KafkaPythonMember(threading.Thread):
    """A kafka-python consumer polling in a thread until ``stop()``."""

    def __init__(self, bootstrap: str, group: str, topics: list[str], commit_every: int = 0, **config):
        """``commit_every=N``: commit after every N-th batch processed (0: never)."""
        super().__init__(daemon=True)
        from kafka import KafkaConsumer
        settings = dict(KAFKA_PYTHON_GROUP, enable_auto_commit=False, **config)
        self.consumer = KafkaConsumer(*topics, bootstrap_servers=bootstrap, group_id=group, **settings)
        # kafka-python 3.0.12 can hang when topic metadata arrives during its first join:
        # the metadata-triggered rejoin is never collected if poll() times out mid-join.
        # Knowing the topics before the first poll avoids that rejoin.
        for topic in topics:
            wait_until(lambda t=topic: self.consumer.partitions_for_topic(t), 15, f"metadata of {topic}")
        self.commit_every, self.received, self.errors = commit_every, [], []
        self.batches = self.uncommitted = self.most_uncommitted = 0
        self._stop_event, self._lock = threading.Event(), threading.Lock()
        self._assignment: set = set()
        self.start()

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                batch = self.consumer.poll(timeout_ms=500)
                with self._lock:
                    for records in batch.values():
                        self.received += [(r.partition, r.offset, r.value) for r in records]
                        self.uncommitted += len(records)
                    self._assignment = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
                    self.most_uncommitted = max(self.most_uncommitted, self.uncommitted)
                if batch:
                    self._maybe_commit()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.errors.append(e)
        finally:
            self.consumer.close()

    def _maybe_commit(self) -> None:
        self.batches += 1
        if self.commit_every and self.batches % self.commit_every == 0:
            self.consumer.commit()  # everything returned by poll() so far has been processed
            self.uncommitted = 0

    def assignment(self) -> set:
        with self._lock:
            return set(self._assignment)

    def values(self) -> list[bytes]:
        with self._lock:
            return [v for _, _, v in self.received]

    def stop(self) -> None:
        self._stop_event.set()
        self.join(30)
        assert not self.is_alive(), "consumer thread did not stop"


class ConfluentMember(threading.Thread):
    """A confluent-kafka (librdkafka) consumer polling in a thread, logging its rebalance callbacks.

    ``events`` holds ("assign" | "revoke", {partitions}) in the order the callbacks ran.
    Under the cooperative protocol the callbacks get only the partitions that move, and
    the consumer must add or remove just those (incremental_assign / incremental_unassign).
    """

    def __init__(self, bootstrap: str, group: str, topics: list[str], **config):
        super().__init__(daemon=True)
        from confluent_kafka import Consumer
        consumer_protocol = config.get("group.protocol") == "consumer"  # KIP-848: timeouts are the broker's
        classic = {} if consumer_protocol else CONFLUENT_GROUP
        settings = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest", **classic,
                    **config}
        self.consumer = Consumer(settings)
        self.cooperative = consumer_protocol or "cooperative" in settings.get("partition.assignment.strategy", "")
        self.smallest_assignment: int | None = None  # after the first assignment: did it ever drop to nothing?
        self.events: list[tuple[str, set]] = []
        self.received: list[bytes] = []
        self._stop_event, self._lock = threading.Event(), threading.Lock()
        self._assignment: set = set()
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke)
        self.start()

    def _on_assign(self, consumer, partitions) -> None:
        self.events.append(("assign", {(p.topic, p.partition) for p in partitions}))
        if self.cooperative:
            consumer.incremental_assign(partitions)
        else:
            consumer.assign(partitions)

    def _on_revoke(self, consumer, partitions) -> None:
        self.events.append(("revoke", {(p.topic, p.partition) for p in partitions}))
        if self.cooperative:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                msg = self.consumer.poll(0.1)
                with self._lock:
                    if msg is not None and not msg.error():
                        self.received.append(msg.value())
                    self._assignment = {(p.topic, p.partition) for p in self.consumer.assignment()}
                    if self.events:
                        size = len(self._assignment)
                        self.smallest_assignment = size if self.smallest_assignment is None else min(
                            size, self.smallest_assignment)
        finally:
            self.consumer.close()

    def assignment(self) -> set:
        with self._lock:
            return set(self._assignment)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(30)
        assert not self.is_alive(), "consumer thread did not stop"


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=15)
        return {tp.partition: tp.offset for tp in found}
    finally:
        consumer.close()
