"""Keys land where Java's default partitioner puts them, with the real clients."""

from __future__ import annotations

import random

from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_course.partitioner import murmur2, partition_for
from tests.broker.test_clients import create_topic

PARTITIONS = 3


def test_murmur2_matches_kafka_python_on_random_keys():
    rng = random.Random(7)
    for _ in range(2000):
        key = rng.randbytes(rng.randrange(0, 40))
        assert murmur2(key) & 0x7FFFFFFF == kafka_python_murmur2(key) & 0x7FFFFFFF


def test_kafka_python_default_partitioner_agrees(bootstrap, topic_name):
    from kafka import KafkaProducer
    create_topic(bootstrap, topic_name)
    p = KafkaProducer(bootstrap_servers=bootstrap)
    keys = [f"user-{i}".encode() for i in range(200)]
    metas = [p.send(topic_name, key=k, value=b"x").get(10) for k in keys]
    p.close()
    assert [m.partition for m in metas] == [partition_for(k, PARTITIONS) for k in keys]


def test_confluent_murmur2_random_agrees(bootstrap, topic_name):
    from confluent_kafka import Producer
    create_topic(bootstrap, topic_name)
    landed = {}
    p = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    keys = [f"order-{i}" for i in range(200)]
    for k in keys:
        p.produce(topic_name, b"x", k, on_delivery=lambda err, m: landed.__setitem__(m.key().decode(), m.partition()))
    assert p.flush(10) == 0
    assert landed == {k: partition_for(k, PARTITIONS) for k in keys}
