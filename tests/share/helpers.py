"""Share consumers (confluent-kafka's ``ShareConsumer``) against minikafka, and the settings
that keep share-group tests to a few seconds: a 1.5 s acquisition lock instead of Kafka's 30 s."""

from __future__ import annotations

import threading
import time

from tests.groups.helpers import wait_until

LOCK_MS = 1500
SHARE_CONFIG = {"group.share.record.lock.duration.ms": LOCK_MS, "group.share.min.record.lock.duration.ms": 1000}
LOG_LEVEL = {"log_level": 3}  # the preview warning of librdkafka's share consumer is not a test failure

__all__ = ["LOCK_MS", "SHARE_CONFIG", "Pollers", "earliest", "explicit_consumer", "poll_one", "produce_batches",
           "share_consumer", "wait_until"]


def earliest(bootstrap: str, group: str) -> None:
    """``share.auto.offset.reset=earliest`` for the group (Kafka's default is latest)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    for future in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                  incremental_configs=[entry])]).values():
        future.result(10)


def produce_batches(bootstrap: str, topic: str, count: int, start: int = 0) -> None:
    """``count`` records to partition 0, each in its own batch (so each can be acquired alone)."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(start, start + count):
        producer.produce(topic, f"r{i}".encode(), partition=0)
        producer.flush(10)


def share_consumer(bootstrap: str, group: str, topic: str, **config):
    from confluent_kafka import ShareConsumer
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, **LOG_LEVEL, **config})
    consumer.subscribe([topic])
    return consumer


def explicit_consumer(bootstrap: str, group: str, topic: str):
    """One record per poll, acknowledged by the test itself."""
    return share_consumer(bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit",
                                                      "max.poll.records": 1})


def poll_one(consumer, timeout: float = 10.0):
    """The next record (failing on an error message), waiting at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in consumer.poll(0.2):
            assert message.error() is None, message.error()
            return message
    raise AssertionError(f"no record within {timeout:.0f} s")


class Pollers:
    """Share consumers polling in their own threads (implicit acknowledgement: each poll
    accepts what the previous one returned), recording (offset, delivery count)."""

    def __init__(self, consumers):
        self.consumers = consumers
        self.got: list[list[tuple[int, int]]] = [[] for _ in consumers]
        self.errors: list = []
        self._stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(len(consumers))]

    def __enter__(self) -> Pollers:
        for thread in self.threads:
            thread.start()
        return self

    def _run(self, i: int) -> None:
        while not self._stop.is_set():
            for message in self.consumers[i].poll(0.2):
                if message.error() is not None:
                    self.errors.append(message.error())
                else:
                    self.got[i].append((message.offset(), message.delivery_count()))

    def total(self) -> int:
        return sum(len(g) for g in self.got)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self.threads:
            thread.join(5)
        for consumer in self.consumers:
            consumer.close()


def poll_together(cluster, topic: str, consumers, count: int, timeout: float = 30) -> Pollers:
    """Start ``consumers`` polling, wait until each has a share session on the broker, write
    ``count`` records and wait until they are consumed; the pollers, stopped, with what each got."""
    broker = cluster.broker()
    with Pollers(consumers) as pollers:
        wait_until(lambda: cluster.call(lambda: len(broker.share_partitions.sessions.sessions)) == len(consumers),
                   20, f"{len(consumers)} members fetching")
        produce_batches(cluster.bootstrap_servers, topic, count)
        wait_until(lambda: pollers.total() >= count, timeout, f"{count} records consumed")
    return pollers
