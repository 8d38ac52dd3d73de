"""Kafka's epoch rules for a transactional id, request by request and with real clients:
InitProducerId while a transaction is open aborts it with one bump and answers
CONCURRENT_TRANSACTIONS (the retry bumps again, KAFKA-19367), a producer's own bump
(KIP-360) and its retry, and a retried EndTxn v5 answered the same after the coordinator
restarted, from what ``__transaction_state`` keeps (PreviousProducerId, NextProducerId)."""

from __future__ import annotations

import datetime

import pytest
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest

from minikafka.errors import ErrorCode
from minikafka.transactions import txnlog
from minikafka.transactions.coordinator import MAX_EPOCH
from minikafka.transactions.states import TxnState
from tests.rawclient import RawClient
from tests.transactions.test_protocol_v2 import TID, end_txn, epoch_near_its_end, init, marker_epochs, produce


def init_with(client: RawClient, pid: int, epoch: int) -> tuple[ErrorCode, int, int]:
    answer = client.request(InitProducerIdRequest(transactional_id=TID, transaction_timeout=datetime.timedelta(
        seconds=60), producer_id=pid, producer_epoch=epoch))
    return answer.error_code, answer.producer_id, answer.producer_epoch


@pytest.fixture
def cluster(make_cluster):
    cluster = make_cluster(brokers=1, config={"transaction.state.log.num.partitions": 1,
                                              "offsets.topic.num.partitions": 1})
    cluster.create_topic("out", partitions=1)
    return cluster


def test_init_producer_id_during_a_transaction_aborts_it_with_one_bump_then_asks_for_a_retry(cluster):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        assert produce(client, pid, epoch, 0) == ErrorCode.none  # opens the transaction (v2 adds the partition)
        assert init_with(client, -1, -1)[0] == ErrorCode.concurrent_transactions
        assert marker_epochs(cluster) == [epoch + 1]  # the abort marker: one bump, never handed out
        assert produce(client, pid, epoch, 1) == ErrorCode.invalid_producer_epoch  # the old instance is fenced
        assert init_with(client, -1, -1) == (ErrorCode.none, pid, epoch + 2)  # the retry bumps once more


def test_a_new_confluent_producer_fences_one_with_an_open_transaction(cluster):
    from confluent_kafka import KafkaException, Producer
    settings = {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "app", "linger.ms": 0}
    zombie = Producer(settings)
    zombie.init_transactions(15)
    zombie.begin_transaction()
    zombie.produce("out", b"never committed", partition=0)
    assert zombie.flush(10) == 0
    broker = cluster.brokers[cluster.node_ids[0]]
    first = broker.transactions.txns["app"].producer_epoch
    successor = Producer(settings)
    successor.init_transactions(15)  # CONCURRENT_TRANSACTIONS once, then the retry succeeds
    assert broker.transactions.txns["app"].producer_epoch == first + 2
    assert marker_epochs(cluster) == [first + 1]
    with pytest.raises(KafkaException) as fenced:
        zombie.commit_transaction(10)
    assert fenced.value.args[0].fatal() or "fenced" in str(fenced.value).lower()


def test_a_producers_own_bump_kip_360_and_its_retry(cluster):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        assert init_with(client, pid, epoch) == (ErrorCode.none, pid, epoch + 1)
        assert init_with(client, pid, epoch) == (ErrorCode.none, pid, epoch + 1)  # its answer was lost: same epoch
        assert init_with(client, pid, epoch - 1)[0] == ErrorCode.producer_fenced
        assert init_with(client, pid + 1000, epoch + 1)[0] == ErrorCode.producer_fenced
        assert init_with(client, -1, -1) == (ErrorCode.none, pid, epoch + 2)  # a new instance
        assert init_with(client, pid, epoch)[0] == ErrorCode.producer_fenced  # the retry now comes too late


def test_a_retried_end_txn_gets_the_same_answer_from_a_restarted_coordinator(cluster):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        assert produce(client, pid, epoch, 0) == ErrorCode.none
        assert end_txn(client, pid, epoch, commit=True) == (ErrorCode.none, pid, epoch + 1)
    cluster.restart()
    with RawClient(cluster.bootstrap_servers) as client:
        assert end_txn(client, pid, epoch, commit=True) == (ErrorCode.none, pid, epoch + 1)
        assert end_txn(client, pid, epoch, commit=False)[0] == ErrorCode.invalid_txn_state


def test_a_retry_after_the_move_to_a_new_id_survives_a_restart(cluster):
    """The epoch used up, the producer moved to a new id; the state record keeps the old one
    (PreviousProducerId), so a retry with the old id and last epoch still gets the new id."""
    with RawClient(cluster.bootstrap_servers) as client:
        pid, _ = init(client)
        epoch_near_its_end(cluster)
        assert produce(client, pid, MAX_EPOCH - 1, 0) == ErrorCode.none
        code, new_pid, new_epoch = end_txn(client, pid, MAX_EPOCH - 1, commit=True)
        assert code == ErrorCode.none and new_pid != pid and new_epoch == 0
    cluster.restart()
    with RawClient(cluster.bootstrap_servers) as client:
        assert end_txn(client, pid, MAX_EPOCH - 1, commit=True) == (ErrorCode.none, new_pid, 0)
        assert end_txn(client, pid, MAX_EPOCH - 2, commit=True)[0] == ErrorCode.invalid_producer_id_mapping


def test_the_state_record_keeps_the_v2_fields_in_kafkas_flexible_layout():
    meta = txnlog.TxnMetadata("tid", 7, 3, 60_000, TxnState.PREPARE_COMMIT, {("out", 0), ("out", 2), ("b", 1)},
                              1_000, 900, previous_producer_id=5, next_producer_id=9, client_transaction_version=2)
    value = txnlog.encode_value(meta, version=1)
    assert value[:2] == b"\x00\x01"
    assert txnlog.decode_value("tid", value) == meta
    empty = txnlog.TxnMetadata("tid", 7, 4, 60_000, TxnState.COMPLETE_COMMIT, set(), 1_000, 900)
    assert value.endswith(b"\x03\x00\x08" + (5).to_bytes(8, "big") + b"\x01\x08" + (9).to_bytes(8, "big")
                          + b"\x02\x02\x00\x02")
    assert txnlog.encode_value(empty, version=1).endswith(b"\x00")  # defaults are not written
    assert txnlog.decode_value("tid", txnlog.encode_value(meta, version=0)).previous_producer_id == -1
