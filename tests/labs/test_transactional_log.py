"""How lab 08 tells a topic written in transactions from one written by a plain producer.

Both ways are tested on the embedded broker: the batch headers read from minikafka's
segment files, and the offsets that commit markers take, which is what the check uses on
a cluster whose files it cannot read.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Producer

import kafka_course as course
from kafka_course.labs import transactional_log


def fill(bootstrap: str, *, transactional: bool) -> str:
    topic = course.new_topic("written", partitions=2, bootstrap=bootstrap)
    config = {"bootstrap.servers": bootstrap, "linger.ms": 5}
    if transactional:
        config["transactional.id"] = f"writer-{uuid.uuid4().hex[:6]}"
    producer = Producer(config)
    if transactional:
        producer.init_transactions(15)
        producer.begin_transaction()
    for i in range(20):
        producer.produce(topic, f"record {i}".encode(), f"key-{i % 5}".encode())
    if transactional:
        producer.commit_transaction(15)
    assert producer.flush(15) == 0
    return topic


@pytest.mark.parametrize("transactional", [True, False])
def test_both_ways_agree_on_how_a_topic_was_written(one_broker, transactional):
    topic = fill(one_broker, transactional=transactional)
    from_segments = transactional_log.written(one_broker, topic)
    from_offsets = transactional_log._from_offsets(one_broker, topic)
    assert from_segments.how == "segments" and from_offsets.how == "offsets"
    assert from_segments.in_transactions is transactional and from_offsets.in_transactions is transactional
    if transactional:  # one commit marker per partition the transaction wrote to
        assert from_segments.transactional_batches == from_segments.data_batches
        assert from_segments.markers == from_offsets.markers == 2
    else:
        assert from_segments.transactional_batches == 0 and from_segments.markers == from_offsets.markers == 0
