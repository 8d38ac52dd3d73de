"""The share group settings Kafka 4.x added to ``share.*``: ``share.partition.max.record.locks``
(how many records of one share-partition may be in flight) and ``share.isolation.level``
(read_committed delivers no record of an open or aborted transaction), set and described
through IncrementalAlterConfigs/DescribeConfigs on a GROUP resource, with confluent-kafka."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from tests.share.helpers import SHARE_CONFIG, earliest, poll_one, share_consumer, wait_until
from tests.share.test_share_tools import alter

pytestmark = pytest.mark.timeout(60)


def described(bootstrap: str, group: str) -> dict:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future] = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()
    return future.result(10)


def test_the_new_share_settings_have_kafkas_defaults_and_bounds(make_cluster):
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    configs = described(bootstrap, "g")
    assert configs["share.isolation.level"].value == "read_uncommitted" and configs["share.isolation.level"].is_default
    assert configs["share.partition.max.record.locks"].value == "2000"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    alter(admin, "g", "share.isolation.level", "read_committed").result(10)
    alter(admin, "g", "share.partition.max.record.locks", "150").result(10)
    for name, value, problem in (("share.isolation.level", "serializable", "one of read_uncommitted, read_committed"),
                                 ("share.partition.max.record.locks", "99", "between 100"),
                                 ("share.partition.max.record.locks", "10001", "and 10000"),
                                 ("share.partition.max.record.locks", "many", "must be")):
        with pytest.raises(Exception) as e:
            alter(admin, "g", name, value).result(10)
        assert e.value.args[0].name() == "INVALID_CONFIG" and problem in e.value.args[0].str(), e.value
    configs = described(bootstrap, "g")
    assert configs["share.isolation.level"].value == "read_committed"
    assert configs["share.isolation.level"].source == 8, "DYNAMIC_GROUP_CONFIG"
    assert configs["share.partition.max.record.locks"].value == "150"


def test_a_group_limit_on_record_locks_bounds_what_is_in_flight(make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    earliest(bootstrap, "few")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    alter(admin, "few", "share.partition.max.record.locks", "100").result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50})
    for i in range(250):
        producer.produce(topic_name, f"r{i}".encode(), partition=0)
    producer.flush(10)
    consumer = share_consumer(bootstrap, "few", topic_name,
                              **{"share.acknowledgement.mode": "explicit", "max.poll.records": 500})
    try:
        poll_one(consumer)  # nothing acknowledged: the member holds what it got
        wait_until(lambda: cluster.share_partition_state("few", topic_name)["end_offset"] >= 100, 10, "100 acquired")
        time.sleep(0.5)  # more fetches cannot take more
        state = cluster.share_partition_state("few", topic_name)
        assert (state["start_offset"], state["end_offset"]) == (0, 100), "the window is full at 100 records"
    finally:
        consumer.close()


def test_read_committed_share_group_skips_open_and_aborted_transactions(make_cluster, topic_name):
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(topic_name, partitions=1)
    earliest(bootstrap, "committed")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    alter(admin, "committed", "share.isolation.level", "read_committed").result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx-share"})
    producer.init_transactions(10)
    for values, commit in ((("a1", "a2"), False), (("c1", "c2"), True), (("a3",), False), (("c3",), True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic_name, value.encode(), partition=0)
        producer.flush(10)
        (producer.commit_transaction if commit else producer.abort_transaction)(10)
    producer.begin_transaction()
    producer.produce(topic_name, b"open", partition=0)
    producer.flush(10)  # left open: read_committed must not deliver it
    consumer = share_consumer(bootstrap, "committed", topic_name, **{"share.acknowledgement.mode": "explicit"})
    try:
        seen: list[str] = []
        deadline = time.monotonic() + 10
        while len(seen) < 3 and time.monotonic() < deadline:
            for message in consumer.poll(0.2):
                assert message.error() is None, message.error()
                seen.append(message.value().decode())
                consumer.acknowledge(message)
        assert seen == ["c1", "c2", "c3"]
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            assert not consumer.poll(0.2), "a record of an open transaction was delivered"
        producer.commit_transaction(10)
        assert poll_one(consumer).value() == b"open", "committed now, so delivered"
    finally:
        consumer.close()


def test_a_topic_deleted_and_created_again_is_read_at_once_by_its_share_consumer(make_cluster, topic_name):
    """Same name, same partitions, a new topic id: the next heartbeat gives the members the new
    id, and the new topic's records come at delivery count 1 within seconds (Kafka's behaviour;
    minikafka used to keep the old id until the members rejoined, 25-45 s later)."""
    cluster = make_cluster(config=SHARE_CONFIG)
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    cluster.create_topic(topic_name, partitions=1)
    earliest(bootstrap, "again")
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    producer.produce(topic_name, b"old", partition=0)
    producer.flush(10)
    consumer = share_consumer(bootstrap, "again", topic_name)
    try:
        assert poll_one(consumer).value() == b"old"
        admin.delete_topics([topic_name])[topic_name].result(10)
        wait_until(lambda: topic_name not in cluster.call(lambda: set(cluster.metadata.topics)), 10, "topic deleted")
        cluster.create_topic(topic_name, partitions=1)
        started = time.monotonic()
        for value in (b"new0", b"new1", b"new2"):
            producer.produce(topic_name, value, partition=0)
        producer.flush(10)
        got = []
        while len(got) < 3 and time.monotonic() - started < 15:
            for message in consumer.poll(0.2):
                if message.error() is None:
                    got.append((message.value(), message.delivery_count()))
        assert sorted(got) == [(b"new0", 1), (b"new1", 1), (b"new2", 1)], got
        assert time.monotonic() - started < 15
    finally:
        consumer.close()
