"""Shared pieces of the replication tests: a producer that records what was
acknowledged, a reader of whole partitions, and waiting for a condition."""

from __future__ import annotations

import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def read_partitions(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> dict[int, list[bytes]]:
    """Every record of every partition, up to the end each had when reading began."""
    from confluent_kafka.admin import AdminClient  # noqa: F401 (keeps the import local)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    done: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(done) < partitions and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                done.add(m.partition())
            continue
        out[m.partition()].append(m.value())
    c.close()
    return out


class AckedProducer:
    """Produces numbered records in a background thread and remembers the acknowledged ones."""

    def __init__(self, bootstrap: str, topic: str, **conf):
        settings = {"bootstrap.servers": bootstrap, "linger.ms": 2, "partitioner": "murmur2_random"}
        settings.update(conf)
        self.producer = Producer(settings)
        self.topic = topic
        self.acked: dict[int, list[bytes]] = {}
        self.failed = 0
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_delivery(self, err, msg):
        if err is None:
            self.acked.setdefault(msg.partition(), []).append(msg.value())
        else:
            self.failed += 1

    def _run(self):
        while not self._stop.is_set():
            try:
                self.producer.produce(self.topic, b"m-%08d" % self.sent, str(self.sent % 31),
                                      on_delivery=self._on_delivery)
                self.sent += 1
            except BufferError:
                pass
            self.producer.poll(0.001)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)
        self.producer.flush(60)

    @property
    def acked_count(self) -> int:
        return sum(map(len, self.acked.values()))
