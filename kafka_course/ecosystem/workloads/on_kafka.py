"""The three workloads on Kafka (confluent-kafka): a consumer group per service, a partition per worker.

``settings`` are librdkafka consumer settings for the consumers of the run (the new
service's in ``replay``); the run sets ``bootstrap.servers`` and names the groups.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...client_logs import quiet
from ...i18n import _
from . import DASHBOARDS, JOBS, LIMIT_S, PAYMENTS, TICKS, WORKERS, Jobs, Run, p99, publish_ticks

if TYPE_CHECKING:
    from confluent_kafka import Consumer


def _topic(bootstrap: str, name: str, partitions: int) -> str:
    from .._kafka import ensure_topic
    topic = f"{name}-{uuid.uuid4().hex[:6]}"
    ensure_topic(bootstrap, topic, partitions)
    return topic


def _produce(bootstrap: str, topic: str, values: list[bytes],
             partition_of: Callable[[int], int] = lambda i: 0) -> None:
    from confluent_kafka import Producer
    producer = Producer(quiet({"bootstrap.servers": bootstrap, "linger.ms": 0}))
    for i, value in enumerate(values):
        producer.produce(topic, value, partition=partition_of(i))
    producer.flush(10)


def _consumer(bootstrap: str, **settings: Any) -> Consumer:
    # confluent types a Message's value and offset as optional (unset on an error event); the lines of
    # this module that read them from a record carry a type: ignore
    from confluent_kafka import Consumer
    return Consumer(quiet({"enable.partition.eof": False, **settings, "bootstrap.servers": bootstrap}))


def replay(bootstrap: str, settings: dict[str, Any]) -> Run:
    """The ledger group reads the history; then a new group, with ``settings``, reads what it can."""
    topic = _topic(bootstrap, "payments", 1)
    history = [f"payment {i}".encode() for i in range(PAYMENTS)]
    _produce(bootstrap, topic, history)
    _read(bootstrap, topic, {"group.id": f"ledger-{topic}", "auto.offset.reset": "earliest"}, PAYMENTS)
    started = time.perf_counter()
    values = _read(bootstrap, topic, {**settings, "group.id": f"fraud-{topic}"}, PAYMENTS)
    return Run("replay", "kafka", time.perf_counter() - started, len(values), values == history[:len(values)])


def _read(bootstrap: str, topic: str, settings: dict, expected: int, idle: float = 3.0) -> list[bytes]:
    consumer = _consumer(bootstrap, **settings)
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline, last = time.monotonic() + LIMIT_S, time.monotonic()
    try:
        while len(values) < expected and time.monotonic() < min(deadline, last + idle):
            if not consumer.assignment():  # still joining (Kafka waits group.initial.rebalance.delay.ms)
                last = time.monotonic()
            for msg in consumer.consume(100, 0.2):
                if msg.error() is None:
                    values.append(msg.value())  # type: ignore[arg-type]  # a record has them
                    last = time.monotonic()
    finally:
        consumer.close()
    return values


def work_queue(bootstrap: str, settings: dict[str, Any]) -> Run:
    """Jobs keyed by camera, one partition per camera; each worker owns one partition, as a
    group of three members on three partitions settles after its rebalance."""
    topic = _topic(bootstrap, "jobs", WORKERS)
    jobs = Jobs("kafka")
    workers = [threading.Thread(target=_worker, args=(bootstrap, topic, p, jobs, settings), daemon=True)
               for p in range(WORKERS)]
    started = time.perf_counter()
    _produce(bootstrap, topic, [str(j).encode() for j in range(JOBS)], partition_of=lambda j: j % WORKERS)
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(LIMIT_S + 5)
    jobs.run.seconds = time.perf_counter() - started
    return jobs.run


def _worker(bootstrap: str, topic: str, partition: int, jobs: Jobs, settings: dict) -> None:
    from confluent_kafka import TopicPartition
    consumer = _consumer(bootstrap, **{"group.id": f"thumbnails-{topic}", **settings})
    consumer.assign([TopicPartition(topic, partition, 0)])
    deadline = time.monotonic() + LIMIT_S
    try:
        while not jobs.finished() and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None or msg.error() is not None:
                continue
            if not jobs.attempt(int(msg.value()), f"worker {partition + 1}"):  # type: ignore[arg-type]  # a record has them
                # Kafka cannot hand one record to another worker: this worker reads it again.
                consumer.seek(TopicPartition(topic, partition, msg.offset()))  # type: ignore[arg-type]  # a record has them
    finally:
        consumer.close()


def fan_out(bootstrap: str, settings: dict[str, Any]) -> Run:
    """One consumer (one group) per dashboard, all reading the ticks topic as it is written."""
    from confluent_kafka import Producer, TopicPartition

    from ...clients import offsets
    topic = _topic(bootstrap, "ticks", 1)
    run = Run("fan-out", "kafka")
    latencies: list[float] = []
    dashboards = []
    for d in range(DASHBOARDS):
        consumer = _consumer(bootstrap, **{"group.id": f"dashboard-{d}-{topic}", **settings})
        consumer.assign([TopicPartition(topic, 0, 0)])
        dashboards.append(threading.Thread(target=_dashboard, args=(consumer, latencies, run), daemon=True))
    for dashboard in dashboards:
        dashboard.start()
    producer = Producer(quiet({"bootstrap.servers": bootstrap, "linger.ms": 0}))

    def send(payload: bytes) -> None:
        producer.produce(topic, payload)
        producer.poll(0)
    run.seconds = publish_ticks(send)
    producer.flush(10)
    for dashboard in dashboards:
        dashboard.join(LIMIT_S)
    run.p99_ms = p99(latencies)
    run.held = sum(o.records for o in offsets(topic, bootstrap=bootstrap))
    run.note = _("a topic keeps every record for its retention time (7 days by default), read or not")
    return run


def _dashboard(consumer: Consumer, latencies: list[float], run: Run) -> None:
    got, deadline = 0, time.monotonic() + LIMIT_S
    try:
        while got < TICKS and time.monotonic() < deadline:
            for msg in consumer.consume(100, 0.1):
                if msg.error() is None:
                    latencies.append(time.perf_counter() - float(msg.value()))  # type: ignore[arg-type]  # a record has them
                    got += 1
    finally:
        consumer.close()
        run.delivered.append(got)
