"""Helpers for the pipeline tests: topics full of seeded sign-ups."""

from __future__ import annotations

import uuid

from kafka_course.fakeusers import FakeUsers, key_of, serialize

START = 1_700_000_000.0  # a fixed event-time origin, so windows are reproducible


def create_topic(bootstrap: str, partitions: int = 3, name: str | None = None) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = name or f"signups-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)
    return topic


def produce_signups(bootstrap: str, topic: str, count: int, seed: int = 1, first: int = 0,
                    headers: bool = False) -> list[dict]:
    """Send ``count`` seeded sign-ups (events ``first``..``first+count-1`` of the seed's stream)."""
    from confluent_kafka import Producer
    users = FakeUsers(seed=seed, start=START, interval=0.25)
    events = users.take(first + count)[first:]
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 5})
    for e in events:
        producer.produce(topic, key=key_of(e), value=serialize(e),
                         headers=[("source", b"tests"), ("plan", e["plan"].encode())] if headers else None)
    assert producer.flush(30) == 0
    return events
