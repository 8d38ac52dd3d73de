"""Clients cannot write to or reshape the coordinators' internal topics (as in Kafka)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka import KafkaError as CKError
from confluent_kafka.admin import AdminClient, NewPartitions

OFFSETS = "__consumer_offsets"


def admin(bootstrap):
    """Keep the client in a local variable: it must outlive the futures it returns."""
    return AdminClient({"bootstrap.servers": bootstrap})


def commit_offset(bootstrap: str, group: str, topic: str, offset: int) -> None:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    c.close()


def committed(bootstrap: str, group: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return c.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        c.close()


def test_producing_to_an_internal_topic_is_refused_and_restarts_stay_clean(make_cluster):
    cluster = make_cluster()
    cluster.create_topic("orders")
    commit_offset(cluster.bootstrap_servers, "billing", "orders", 7)  # creates __consumer_offsets
    errors = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retries": 0})
    for partition in range(3):
        p.produce(OFFSETS, key=b"\x00\x07garbage", value=b"\xff" * 10, partition=partition,
                  on_delivery=lambda err, msg: errors.append(err))
    p.produce("__transaction_state", key=b"\x00", value=b"\x00", partition=0,
              on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(15) == 0
    assert len(errors) == 4 and all(e is not None and e.code() == CKError.TOPIC_EXCEPTION for e in errors)
    cluster.restart()  # replaying the groups finds nothing of the client's
    assert committed(cluster.bootstrap_servers, "billing", "orders") == 7


def test_delete_records_of_an_internal_topic_is_refused(make_cluster):
    cluster = make_cluster()
    cluster.create_topic("orders")
    commit_offset(cluster.bootstrap_servers, "billing", "orders", 3)
    client = admin(cluster.bootstrap_servers)
    futures = client.delete_records(
        [TopicPartition(OFFSETS, p, -1) for p in range(50)])
    codes = set()
    for fut in futures.values():
        with pytest.raises(KafkaException) as info:
            fut.result(10)
        codes.add(info.value.args[0].code())
    assert codes == {CKError.TOPIC_EXCEPTION}
    cluster.restart()
    assert committed(cluster.bootstrap_servers, "billing", "orders") == 3


def test_partitions_of_an_internal_topic_cannot_change(make_cluster):
    cluster = make_cluster()
    cluster.create_topic("orders")
    commit_offset(cluster.bootstrap_servers, "billing", "orders", 1)
    client = admin(cluster.bootstrap_servers)
    fut = client.create_partitions([NewPartitions(OFFSETS, 60)])[OFFSETS]
    with pytest.raises(KafkaException) as info:
        fut.result(10)
    assert info.value.args[0].code() == CKError.INVALID_REQUEST
    assert "cannot change" in info.value.args[0].str()
    assert len(cluster.metadata.topics[OFFSETS].partitions) == 50


def test_a_corrupt_record_already_in_consumer_offsets_is_skipped_on_load(make_cluster):
    """A log written before the guard (or damaged on disk) must not stop the broker."""
    from minikafka import records
    cluster = make_cluster()
    cluster.create_topic("orders")
    commit_offset(cluster.bootstrap_servers, "billing", "orders", 5)
    broker = cluster.broker()
    index = broker.groups.partition_of("billing")
    part = broker.local_replica(OFFSETS, index)
    bad = [records.Record(0, 0, b"\x00\x01\x00\x07bil", b"\xff\xff"),  # offset key cut short
           records.Record(1, 0, b"\x00\x02\x00\x07billing", b"\x00\x03\xff")]  # group value cut short
    cluster.call(part.append_produced, records.build_batch(bad))
    cluster.restart()
    assert committed(cluster.bootstrap_servers, "billing", "orders") == 5
