"""DescribeTransactions (KIP-664) with kafka-python's admin client: the state, producer id, epoch
and partitions the coordinator holds for a transactional id, which notebook 08 reads after each
commit. Under transaction protocol v1 (confluent-kafka) the epoch stays; under v2 (the course's
TransactionV2Producer, sending what the Java client sends) it climbs at every commit, and a late
write of an ended transaction is fenced."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient
from kafka.admin import TransactionState
from kafka.errors import TransactionalIdNotFoundError

from kafka_course import features
from kafka_course.transaction_v2 import TransactionV2Producer
from tests.transactions.helpers import read_topic, values


@pytest.fixture
def cluster(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("ledger", partitions=2)
    return cluster


@pytest.fixture
def admin(cluster):
    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    yield client
    client.close()


def test_a_classic_producer_keeps_its_epoch_across_commits(cluster, admin):
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "v1"})
    producer.init_transactions(15)
    seen = []
    for n in range(3):
        producer.begin_transaction()
        producer.produce("ledger", value=b"%d" % n, partition=1)
        producer.commit_transaction(15)
        described = admin.describe_transactions(["v1"])["v1"]
        seen.append((described.producer_id, described.producer_epoch))
    assert len(set(seen)) == 1 and seen[0][0] >= 0


def test_an_open_transaction_is_ongoing_with_its_partitions(cluster, admin):
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "open"})
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce("ledger", value=b"pending", partition=1)
    producer.flush(10)
    described = admin.describe_transactions(["open"])["open"]
    assert described.state == TransactionState.ONGOING
    assert {(tp.topic, tp.partition) for tp in described.topic_partitions} == {("ledger", 1)}
    assert described.transaction_start_time_ms > 0 and described.transaction_timeout_ms == 60_000
    producer.abort_transaction(15)
    assert admin.describe_transactions(["open"])["open"].state in (TransactionState.PREPARE_ABORT,
                                                                   TransactionState.COMPLETE_ABORT)


def test_an_unknown_transactional_id_is_not_found(cluster, admin):
    with pytest.raises(TransactionalIdNotFoundError):
        admin.describe_transactions(["nobody"])


def test_protocol_v2_bumps_the_epoch_at_every_commit_and_fences_a_late_write(cluster, admin):
    assert features.supports_transaction_v2(cluster.bootstrap_servers)
    producer = TransactionV2Producer(cluster.bootstrap_servers, "v2")
    pid, epoch = producer.init_transactions()
    epochs = []
    for n in range(3):
        assert producer.produce("ledger", 0, f"entry {n}") == "NONE"
        assert producer.commit_transaction() == (pid, epoch + n + 1)
        described = admin.describe_transactions(["v2"])["v2"]
        epochs.append((described.producer_id, described.producer_epoch))
    assert epochs == [(pid, epoch + 1), (pid, epoch + 2), (pid, epoch + 3)]
    assert not any(name.startswith("AddPartitionsToTxn") for name in producer.sent)
    assert producer.send_late(producer.writes[0]) == "INVALID_PRODUCER_EPOCH"
    assert values(read_topic(cluster.bootstrap_servers, "ledger", 2)) == [b"entry 0", b"entry 1", b"entry 2"]


def test_a_cluster_at_transaction_version_1_offers_no_protocol_v2(make_cluster):
    cluster = make_cluster(config={"transaction.version": 1})
    assert not features.supports_transaction_v2(cluster.bootstrap_servers)
