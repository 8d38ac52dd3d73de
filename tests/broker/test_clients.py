"""Real clients against minikafka: every codec, keyed order per partition, kcat.

These are the conformance tests of the broker core: if kafka-python, confluent-kafka,
aiokafka and kcat each round-trip 10,000 keyed records per compression codec with
per-partition order intact, the broker speaks Kafka well enough for the course.
"""

from __future__ import annotations

import asyncio
import collections
import subprocess
import time

import pytest

from tests.conftest import has_kcat

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
N = 10_000
PARTITIONS = 3


def expected_records(codec: str):
    return [(f"key-{i % 97}".encode(), f"{codec}-{i}".encode()) for i in range(N)]


def check_order(received: list[tuple[int, bytes, bytes]], codec: str) -> None:
    """Every record arrived once, and within each key (one partition) in send order."""
    values = [v for _, _, v in received if v.startswith(codec.encode() + b"-")]
    assert sorted(values) == sorted(v for _, v in expected_records(codec))
    by_key = collections.defaultdict(list)
    partition_of_key = {}
    for p, k, v in received:
        if v.startswith(codec.encode() + b"-"):
            by_key[k].append(int(v.split(b"-")[-1]))
            assert partition_of_key.setdefault(k, p) == p, "one key must always land on one partition"
    for k, seq in by_key.items():
        assert seq == sorted(seq), f"records of {k!r} came back out of order"


def create_topic(bootstrap: str, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    client = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    for f in client.create_topics([NewTopic(name, PARTITIONS, 1)]).values():
        f.result(10)


def consume_all_confluent(bootstrap: str, topic: str, expected: int) -> list[tuple[int, bytes, bytes]]:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    out, deadline = [], time.monotonic() + 60
    while len(out) < expected and time.monotonic() < deadline:
        for m in c.consume(1000, 0.5):
            assert m.error() is None, m.error()
            out.append((m.partition(), m.key(), m.value()))
    c.close()
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_round_trip(bootstrap, topic_name, codec):
    from confluent_kafka import Producer
    create_topic(bootstrap, topic_name)
    p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 5,
                  "partitioner": "murmur2_random", "enable.idempotence": True})
    for k, v in expected_records(codec):
        p.produce(topic_name, v, k)
        p.poll(0)
    assert p.flush(30) == 0
    check_order(consume_all_confluent(bootstrap, topic_name, N), codec)


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_round_trip(bootstrap, topic_name, codec):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    create_topic(bootstrap, topic_name)
    p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec, linger_ms=5)
    futures = [p.send(topic_name, key=k, value=v) for k, v in expected_records(codec)]
    p.flush(30)
    assert all(f.succeeded() for f in futures)
    p.close()
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    c.assign([TopicPartition(topic_name, i) for i in range(PARTITIONS)])
    c.seek_to_beginning()
    out, deadline = [], time.monotonic() + 60
    while len(out) < N and time.monotonic() < deadline:
        for tp, msgs in c.poll(timeout_ms=500).items():
            out += [(tp.partition, m.key, m.value) for m in msgs]
    c.close()
    check_order(out, codec)


@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_round_trip(bootstrap, topic_name, codec):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    create_topic(bootstrap, topic_name)

    async def run():
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec,
                             linger_ms=5, enable_idempotence=True)
        await p.start()
        try:
            batch = [await p.send(topic_name, v, key=k) for k, v in expected_records(codec)]
            await asyncio.gather(*batch)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await c.start()
        out = []
        try:
            c.assign([TopicPartition(topic_name, i) for i in range(PARTITIONS)])
            await c.seek_to_beginning()
            deadline = time.monotonic() + 60
            while len(out) < N and time.monotonic() < deadline:
                for tp, msgs in (await c.getmany(timeout_ms=500)).items():
                    out += [(tp.partition, m.key, m.value) for m in msgs]
        finally:
            await c.stop()
        return out

    check_order(asyncio.run(run()), codec)


@pytest.mark.skipif(not has_kcat(), reason="kcat is not installed")
def test_kcat_metadata_produce_consume(bootstrap, topic_name):
    create_topic(bootstrap, topic_name)
    meta = subprocess.run(["kcat", "-b", bootstrap, "-L", "-t", topic_name], capture_output=True, text=True, timeout=30)
    assert meta.returncode == 0, meta.stderr
    assert f'topic "{topic_name}" with {PARTITIONS} partitions' in meta.stdout
    lines = "".join(f"k{i}:v{i}\n" for i in range(50))
    prod = subprocess.run(["kcat", "-b", bootstrap, "-P", "-t", topic_name, "-K:"], input=lines,
                          capture_output=True, text=True, timeout=30)
    assert prod.returncode == 0, prod.stderr
    cons = subprocess.run(["kcat", "-b", bootstrap, "-C", "-t", topic_name, "-e", "-o", "beginning", "-f", "%k=%s\n"],
                          capture_output=True, text=True, timeout=30)
    assert cons.returncode == 0, cons.stderr
    assert sorted(cons.stdout.split()) == sorted(f"k{i}=v{i}" for i in range(50))
