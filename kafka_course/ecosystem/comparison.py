"""One small workload on Kafka, RabbitMQ and NATS, timed the same way on each.

The workload: send ``n`` messages of ``size`` bytes to one topic / queue / subject, and
read them all back once. Each function returns a ``Throughput`` with two rates:

* ``send``: messages per second until the client says everything is sent
  (Kafka: ``flush()``; RabbitMQ: the publish calls returned; NATS: ``flush()``),
* ``total``: messages per second from the first send to the last message received.

Kafka and RabbitMQ store the messages, so the reader starts after the writer. NATS core
stores nothing, so its subscriber must be listening before the first publish.

These are numbers for one laptop and small ``n``: they measure the Python clients as much
as the servers, and the embedded minikafka shares the notebook's interpreter. Use them to
compare orders of magnitude, never as a benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from confluent_kafka import Producer, TopicPartition

from ..i18n import _
from ._kafka import ensure_topic, reader

if TYPE_CHECKING:
    from nats.aio.msg import Msg


@dataclass(frozen=True)
class Throughput:
    system: str
    messages: int
    send_seconds: float
    total_seconds: float

    @property
    def send(self) -> float:
        return self.messages / self.send_seconds if self.send_seconds else float("inf")

    @property
    def total(self) -> float:
        return self.messages / self.total_seconds if self.total_seconds else float("inf")

    def __str__(self) -> str:
        return _("{system:<10} sent {send:>10,.0f} msg/s   sent+received {total:>10,.0f} msg/s   ({messages} "
                 "messages)").format(system=self.system, send=self.send, total=self.total, messages=self.messages)


def kafka_throughput(bootstrap: str, n: int, size: int = 100, timeout: float = 30) -> Throughput:
    topic = f"throughput-{uuid.uuid4().hex[:6]}"
    ensure_topic(bootstrap, topic, partitions=1)
    payload = b"x" * size
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    start = time.perf_counter()
    for _i in range(n):
        producer.produce(topic, payload)
        producer.poll(0)
    producer.flush(timeout)
    sent = time.perf_counter()
    consumer = reader(bootstrap)
    consumer.assign([TopicPartition(topic, 0, 0)])
    received, deadline = 0, time.monotonic() + timeout
    while received < n and time.monotonic() < deadline:
        received += sum(1 for m in consumer.consume(1000, 0.5) if not m.error())
    done = time.perf_counter()
    consumer.close()
    return Throughput("Kafka", received, sent - start, done - start)


def rabbitmq_throughput(url: str, n: int, size: int = 100, timeout: float = 30) -> Throughput:
    import pika
    params = pika.URLParameters(url)
    params.socket_timeout = params.blocked_connection_timeout = 5
    connection = pika.BlockingConnection(params)
    channel = connection.channel()
    queue = channel.queue_declare(queue="", exclusive=True).method.queue  # deleted when we leave
    payload = b"x" * size
    start = time.perf_counter()
    for _i in range(n):
        channel.basic_publish(exchange="", routing_key=queue, body=payload)
    sent = time.perf_counter()
    channel.basic_qos(prefetch_count=1000)
    received, deadline = 0, time.monotonic() + timeout
    for method, _properties, _body in channel.consume(queue, auto_ack=True, inactivity_timeout=1):
        if method is not None:
            received += 1
        if received >= n or time.monotonic() > deadline:
            break
    done = time.perf_counter()
    channel.cancel()
    connection.close()
    return Throughput("RabbitMQ", received, sent - start, done - start)


async def nats_throughput(url: str, n: int, size: int = 100, timeout: float = 30) -> Throughput:
    import nats
    nc = await nats.connect(url, connect_timeout=2, max_reconnect_attempts=0)
    subject = f"throughput.{uuid.uuid4().hex[:6]}"
    received, all_in = 0, asyncio.Event()

    async def on_message(msg: Msg) -> None:
        nonlocal received
        received += 1
        if received >= n:
            all_in.set()

    await nc.subscribe(subject, cb=on_message, pending_msgs_limit=max(65536, n))
    payload = b"x" * size
    start = time.perf_counter()
    for _i in range(n):
        await nc.publish(subject, payload)
    await nc.flush()
    sent = time.perf_counter()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(all_in.wait(), timeout)
    done = time.perf_counter()
    await nc.close()
    return Throughput("NATS", received, sent - start, done - start)
