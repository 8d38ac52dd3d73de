"""``__share_group_state``: an internal, compacted topic that only the brokers write, read
back after a restart, and read past a damaged record."""

from __future__ import annotations


import pytest
from confluent_kafka import KafkaError, Producer

from minikafka import records
from minikafka.share.state_topic import TOPIC, group_key
from tests.share.helpers import SHARE_CONFIG, earliest, explicit_consumer, poll_one, produce_batches

pytestmark = pytest.mark.timeout(60)


def used_share_group(cluster, topic: str, group: str = "g") -> None:
    earliest(cluster.bootstrap_servers, group)
    produce_batches(cluster.bootstrap_servers, topic, 2)
    consumer = explicit_consumer(cluster.bootstrap_servers, group, topic)
    try:
        consumer.acknowledge(poll_one(consumer))
        consumer.commit_sync(10)
    finally:
        consumer.close()


def test_the_state_topic_is_internal_compacted_and_closed_to_clients(make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    used_share_group(cluster, topic_name)
    info = cluster.metadata.topics[TOPIC]
    assert len(info.partitions) == 50 and info.internal
    assert cluster.metadata.topic_config(TOPIC)["cleanup.policy"] == "compact"
    errors = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retries": 0})
    producer.produce(TOPIC, key=b"x", value=b"y", partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(15) == 0
    assert [e.code() for e in errors] == [KafkaError.TOPIC_EXCEPTION]


def test_a_damaged_record_is_skipped_when_the_state_is_read_back(make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    used_share_group(cluster, topic_name)
    index = next(i for i, p in enumerate(cluster.metadata.topics[TOPIC].partitions)
                 if any(r.key == group_key("g") for _, b in cluster.broker().partitions[(TOPIC, i)].log.batches(0)
                        for r in records.iter_records(b)))

    def damage():
        part = cluster.broker().partitions[(TOPIC, index)]
        part.append_batches([records.build_batch([records.Record(0, 0, b"not json", b"{")]),
                             records.build_batch([records.Record(0, 0, group_key("g2"), b"[1, 2")])])
    cluster.call(damage)
    before = cluster.share_partition_state("g", topic_name)
    cluster.restart()
    assert cluster.call(lambda: cluster.broker().share_groups.is_share_group("g"))
    assert not cluster.call(lambda: cluster.broker().share_groups.is_share_group("g2"))
    after = cluster.share_partition_state("g", topic_name)
    assert after == before and after["start_offset"] == 1
