"""The group and transaction coordinators follow the leaders of __consumer_offsets and
__transaction_state: when their broker stops, another one takes over with their state."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

from minikafka.groups.offsets import partition_for
from tests.replication.helpers import wait_for
from tests.transactions.helpers import read_topic, values

SMALL = {"offsets.topic.num.partitions": 5, "transaction.state.log.num.partitions": 5,
         "min.insync.replicas": 2}


def coordinator_of(cluster, topic: str, key: str) -> int:
    info = cluster.metadata.topics[topic]
    return info.partitions[partition_for(key, len(info.partitions))].leader


def test_committed_offsets_survive_a_group_coordinator_failover(make_cluster):
    cluster = make_cluster(brokers=3, config=SMALL)
    cluster.create_topic("clicks", 3, 3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(300):
        p.produce("clicks", b"c%d" % i)
    assert p.flush(10) == 0
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "analytics",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe(["clicks"])
    seen = []
    assert wait_for(lambda: seen.extend(m for m in c.consume(100, 0.5) if not m.error()) or len(seen) >= 150)
    c.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in c.committed([TopicPartition("clicks", i) for i in range(3)], 10)}
    coordinator = coordinator_of(cluster, "__consumer_offsets", "analytics")
    cluster.stop_broker(coordinator)
    assert coordinator_of(cluster, "__consumer_offsets", "analytics") != coordinator
    after = {tp.partition: tp.offset for tp in c.committed([TopicPartition("clicks", i) for i in range(3)], 20)}
    assert after == committed  # the new coordinator loaded the offsets from its replica
    assert wait_for(lambda: seen.extend(m for m in c.consume(100, 0.5) if not m.error()) or len(seen) >= 300,
                    timeout=30)
    c.commit(asynchronous=False)  # and it takes new commits
    c.close()
    assert sorted(m.value() for m in seen) == sorted(b"c%d" % i for i in range(300))


def test_transactions_continue_after_a_transaction_coordinator_failover(make_cluster):
    cluster = make_cluster(brokers=3, config=SMALL)
    cluster.create_topic("ledger", 3, 3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "bank"})
    p.init_transactions(20)
    p.begin_transaction()
    p.produce("ledger", b"before-failover")
    p.commit_transaction(20)
    coordinator = coordinator_of(cluster, "__transaction_state", "bank")
    cluster.stop_broker(coordinator)
    for i in range(3):
        p.begin_transaction()
        p.produce("ledger", b"after-failover-%d" % i)
        p.commit_transaction(30)
    p.begin_transaction()
    p.produce("ledger", b"aborted")
    p.flush(10)
    p.abort_transaction(30)
    got = values(read_topic(cluster.bootstrap_servers, "ledger", 3))
    assert got == sorted([b"before-failover"] + [b"after-failover-%d" % i for i in range(3)])
