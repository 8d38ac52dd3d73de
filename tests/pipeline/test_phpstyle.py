"""php-rdkafka's RdKafka\\Message dump, and why a partition-0 low-level consumer misses data."""

from __future__ import annotations

import time
from collections import Counter

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from kafka_course.fakeusers import FakeUsers, key_of, serialize
from kafka_course.phpstyle import (RD_KAFKA_RESP_ERR__PARTITION_EOF, RD_KAFKA_RESP_ERR__TIMED_OUT, RdKafkaMessage,
                                describe, var_dump)

from .signups import create_topic


def test_var_dump_matches_phps_format_byte_lengths_included():
    message = RdKafkaMessage(err=0, topic_name="fakeusers", timestamp=1609802723400, partition=0,
                             payload='{"name": "Ana Núñez"}'.encode(), len=23, key=None, offset=3,
                             headers={"source": b"web"})
    assert var_dump(message, handle=6) == "\n".join([
        'object(RdKafka\\Message)#6 (9) {',
        '  ["err"]=>', '  int(0)',
        '  ["topic_name"]=>', '  string(9) "fakeusers"',
        '  ["timestamp"]=>', '  int(1609802723400)',
        '  ["partition"]=>', '  int(0)',
        '  ["payload"]=>', '  string(23) "{"name": "Ana Núñez"}"',
        '  ["len"]=>', '  int(23)',
        '  ["key"]=>', '  NULL',
        '  ["offset"]=>', '  int(3)',
        '  ["headers"]=>', '  array(1) {', '    ["source"]=>', '    string(3) "web"', '  }',
        '}'])


def low_level(bootstrap, topic, partition=0, polls=200):
    """The PHP example's consumer: assign one partition from the beginning, stop at EOF."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "php", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    seen, events = [], []
    try:
        for _ in range(polls):
            msg = consumer.poll(1.0)
            message = RdKafkaMessage.from_confluent(msg) if msg else RdKafkaMessage.timed_out()
            events.append(describe(message).splitlines()[0])
            if message.err == 0:
                seen.append(message)
            if message.err in (RD_KAFKA_RESP_ERR__PARTITION_EOF, RD_KAFKA_RESP_ERR__TIMED_OUT):
                break
    finally:
        consumer.close()
    return seen, events


def produce(bootstrap, topic, n):
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for e in FakeUsers(seed=9).take(n):
        producer.produce(topic, key=key_of(e), value=serialize(e))
    assert producer.flush(10) == 0


def test_partition_zero_consumer_sees_one_partition_and_reports_eof(bootstrap):
    topic = create_topic(bootstrap, partitions=3)
    produce(bootstrap, topic, 90)
    seen, events = low_level(bootstrap, topic)
    assert events[-1] == "No more messages; will wait for more"
    assert {m.partition for m in seen} == {0} and 10 < len(seen) < 60  # about a third of 90
    assert [m.offset for m in seen] == list(range(len(seen)))
    assert all(m.len == len(m.payload) and m.topic_name == topic for m in seen)


def test_group_consumer_sees_every_partition(bootstrap):
    topic = create_topic(bootstrap, partitions=3)
    produce(bootstrap, topic, 90)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "printer", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    per_partition: Counter = Counter()
    deadline = time.monotonic() + 30
    try:
        while sum(per_partition.values()) < 90 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                per_partition[msg.partition()] += 1
    finally:
        consumer.close()
    assert sum(per_partition.values()) == 90 and set(per_partition) == {0, 1, 2}
