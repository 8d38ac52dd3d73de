"""Transaction protocol v2 (KIP-890 part 2) over TCP, request by request: EndTxn v5 hands
out a bumped epoch and the markers carry it, so the old epoch is fenced; a Produce v12+
or TxnOffsetCommit v5 adds its partition to the transaction where the cluster finalizes
``transaction.version`` 2, and is refused as before where it finalizes 1 or the request is
older. A used-up epoch moves the producer to a new id."""

from __future__ import annotations

import asyncio
import datetime

import pytest
from kio.schema.api_versions.v3 import request as api_versions
from kio.schema.end_txn.v4.request import EndTxnRequest as EndTxnV4
from kio.schema.end_txn.v5.request import EndTxnRequest as EndTxnV5
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
from kio.schema.offset_fetch.v7 import request as offset_fetch
from kio.schema.produce.v11 import request as produce_v11
from kio.schema.produce.v12 import request as produce_v12
from kio.schema.txn_offset_commit.v5 import request as txn_offset_commit

from minikafka import records
from minikafka.errors import ErrorCode
from minikafka.transactions.coordinator import MAX_EPOCH
from tests.rawclient import RawClient

TID = "raw-v2"


def init(client: RawClient, tid: str = TID) -> tuple[int, int]:
    answer = client.request(InitProducerIdRequest(transactional_id=tid, transaction_timeout=datetime.timedelta(
        seconds=60), producer_id=-1, producer_epoch=-1))
    assert answer.error_code == ErrorCode.none
    return answer.producer_id, answer.producer_epoch


def produce(client: RawClient, pid: int, epoch: int, sequence: int, partition: int = 0, version: int = 12,
            topic: str = "out", tid: str = TID) -> ErrorCode:
    batch = records.build_batch([records.Record(0, 0, b"k", b"v")], producer_id=pid, producer_epoch=epoch,
                                base_sequence=sequence, transactional=True)
    schema = produce_v12 if version == 12 else produce_v11
    answer = client.request(schema.ProduceRequest(transactional_id=tid, acks=-1, timeout=datetime.timedelta(
        seconds=10), topic_data=(schema.TopicProduceData(name=topic, partition_data=(
            schema.PartitionProduceData(index=partition, records=batch),)),)))
    return answer.responses[0].partition_responses[0].error_code


def end_txn(client: RawClient, pid: int, epoch: int, commit: bool, version: int = 5,
            tid: str = TID) -> tuple[ErrorCode, int, int]:
    if version == 5:
        answer = client.request(EndTxnV5(transactional_id=tid, producer_id=pid, producer_epoch=epoch,
                                         committed=commit))
        return answer.error_code, answer.producer_id, answer.producer_epoch
    answer = client.request(EndTxnV4(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit))
    return answer.error_code, pid, epoch


def marker_epochs(cluster, topic: str = "out", partition: int = 0) -> list[int]:
    async def read() -> list[int]:
        part = cluster.brokers[cluster.node_ids[0]].partitions[topic, partition]
        return [h.producer_epoch for h, _ in part.log.batches(0) if h.is_control]
    return cluster.run(read())


def epoch_near_its_end(cluster) -> None:
    """Move the transactional id's epoch to one below the last (as if it had been bumped that often)."""
    broker = cluster.brokers[cluster.node_ids[0]]

    async def near_the_end() -> None:
        broker.transactions.txns[TID].producer_epoch = MAX_EPOCH - 1
    cluster.run(near_the_end())


@pytest.fixture(params=[2, 1], ids=["transaction.version=2", "transaction.version=1"])
def tv(request) -> int:
    return request.param


@pytest.fixture
def cluster(make_cluster, tv):
    cluster = make_cluster(brokers=1, config={"transaction.version": tv, "transaction.state.log.num.partitions": 1,
                                              "offsets.topic.num.partitions": 1})
    cluster.create_topic("out", partitions=2)
    return cluster


def test_api_versions_finalizes_the_configured_transaction_version(cluster, tv):
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(api_versions.ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                flexible_response=False)
    finalized = {f.name: f.max_version_level for f in answer.finalized_features}
    supported = {f.name: (f.min_version, f.max_version) for f in answer.supported_features}
    assert finalized["transaction.version"] == tv and supported["transaction.version"] == (0, 2)


def test_produce_v12_adds_the_partition_only_under_transaction_version_2(cluster, tv):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        code = produce(client, pid, epoch, 0)
        if tv == 1:  # as Kafka 4.1: the producer must add the partition first
            assert code == ErrorCode.invalid_txn_state
            return
        assert code == ErrorCode.none
        assert produce(client, pid, epoch, 0, partition=1, version=11) == ErrorCode.invalid_txn_state
        assert end_txn(client, pid, epoch, commit=True) == (ErrorCode.none, pid, epoch + 1)
    assert marker_epochs(cluster) == [epoch + 1] and marker_epochs(cluster, partition=1) == []


def test_end_txn_v5_bumps_the_epoch_and_fences_the_old_one(cluster, tv):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        if tv == 1:
            return  # Produce v12 cannot open the transaction here (the test above)
        assert produce(client, pid, epoch, 0) == ErrorCode.none
        assert end_txn(client, pid, epoch, commit=True) == (ErrorCode.none, pid, epoch + 1)
        assert end_txn(client, pid, epoch, commit=True) == (ErrorCode.none, pid, epoch + 1)  # a retry
        assert produce(client, pid, epoch, 1) == ErrorCode.invalid_producer_epoch  # a zombie's write
        assert produce(client, pid, epoch + 1, 0) == ErrorCode.none  # the new epoch starts at sequence 0
        assert end_txn(client, pid, epoch + 1, commit=False) == (ErrorCode.none, pid, epoch + 2)
        # Abort with nothing added (the producer's writes failed before reaching the log): allowed, bumped.
        assert end_txn(client, pid, epoch + 2, commit=False) == (ErrorCode.none, pid, epoch + 3)
        assert end_txn(client, pid, epoch + 3, commit=True)[0] == ErrorCode.invalid_txn_state
    assert marker_epochs(cluster) == [epoch + 1, epoch + 2]


def test_end_txn_v4_keeps_the_epoch(cluster, tv):
    from kio.schema.add_partitions_to_txn.v3 import request as add
    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        answer = client.request(add.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TID, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=(add.AddPartitionsToTxnTopic(name="out", partitions=(0,)),)))
        assert answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
        assert produce(client, pid, epoch, 0, version=11) == ErrorCode.none
        assert end_txn(client, pid, epoch, commit=True, version=4)[0] == ErrorCode.none
        assert produce(client, pid, epoch, 1, version=11) == ErrorCode.invalid_txn_state  # not added again
    assert marker_epochs(cluster) == [epoch]


def test_txn_offset_commit_v5_adds_the_offsets_partition_under_version_2(cluster, tv):
    def commit_offset(client: RawClient, pid: int, epoch: int, offset: int) -> ErrorCode:
        answer = client.request(txn_offset_commit.TxnOffsetCommitRequest(
            transactional_id=TID, group_id="app", producer_id=pid, producer_epoch=epoch, generation_id=-1,
            member_id="", group_instance_id=None, topics=(txn_offset_commit.TxnOffsetCommitRequestTopic(
                name="out", partitions=(txn_offset_commit.TxnOffsetCommitRequestPartition(
                    partition_index=0, committed_offset=offset, committed_leader_epoch=-1,
                    committed_metadata=""),)),)))
        return answer.topics[0].partitions[0].error_code

    def committed(client: RawClient) -> int:
        answer = client.request(offset_fetch.OffsetFetchRequest(group_id="app", topics=(
            offset_fetch.OffsetFetchRequestTopic(name="out", partition_indexes=(0,)),), require_stable=True))
        return answer.topics[0].partitions[0].committed_offset

    with RawClient(cluster.bootstrap_servers) as client:
        pid, epoch = init(client)
        code = commit_offset(client, pid, epoch, 5)
        if tv == 1:  # as before: the group's offsets must join through AddOffsetsToTxn
            assert end_txn(client, pid, epoch, commit=True, version=4)[0] == ErrorCode.invalid_txn_state
            assert committed(client) == -1
            return
        assert code == ErrorCode.none
        assert end_txn(client, pid, epoch, commit=False) == (ErrorCode.none, pid, epoch + 1)
        assert committed(client) == -1  # aborted: never the group's
        assert commit_offset(client, pid, epoch + 1, 7) == ErrorCode.none
        assert end_txn(client, pid, epoch + 1, commit=True) == (ErrorCode.none, pid, epoch + 2)
        assert committed(client) == 7


def test_a_used_up_epoch_moves_the_producer_to_a_new_id(cluster, tv):
    with RawClient(cluster.bootstrap_servers) as client:
        pid, _ = init(client)
        epoch_near_its_end(cluster)
        if tv == 1:
            return
        assert produce(client, pid, MAX_EPOCH - 1, 0) == ErrorCode.none
        code, new_pid, new_epoch = end_txn(client, pid, MAX_EPOCH - 1, commit=True)
        assert code == ErrorCode.none and new_pid != pid and new_epoch == 0
        assert end_txn(client, pid, MAX_EPOCH - 1, commit=True) == (ErrorCode.none, new_pid, 0)  # a retry
        assert produce(client, new_pid, 0, 0) == ErrorCode.none
        assert end_txn(client, new_pid, 0, commit=True) == (ErrorCode.none, new_pid, 1)
    assert marker_epochs(cluster) == [MAX_EPOCH, 1]


def test_the_setting_accepts_only_kafkas_levels():
    from minikafka.config import BrokerConfig, ConfigError
    with pytest.raises(ConfigError):
        BrokerConfig({"transaction.version": 3})
    assert BrokerConfig({})["transaction.version"] == 2




@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_classic_clients_keep_their_epoch_under_either_level(cluster, tv, client):
    """librdkafka and kafka-python speak the classic protocol whatever the cluster finalizes: they add
    partitions themselves and their epoch stays put across transactions."""
    from tests.transactions.helpers import read_topic, values
    bootstrap = cluster.bootstrap_servers
    if client == "confluent-kafka":
        from confluent_kafka import Producer
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "classic", "partitioner": "murmur2_random"})
        p.init_transactions(15)
        for outcome in ("commit", "abort", "commit"):
            p.begin_transaction()
            p.produce("out", outcome.encode(), b"k", partition=0)
            p.flush(10)
            p.commit_transaction(15) if outcome == "commit" else p.abort_transaction(15)
    else:
        from kafka import KafkaProducer
        kp = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="classic")
        kp.init_transactions()
        for outcome in ("commit", "abort", "commit"):
            kp.begin_transaction()
            kp.send("out", key=b"k", value=outcome.encode(), partition=0)
            kp.flush()
            kp.commit_transaction() if outcome == "commit" else kp.abort_transaction()
        kp.close()
    assert values(read_topic(bootstrap, "out", 2)) == [b"commit", b"commit"]
    epochs = marker_epochs(cluster)
    assert len(epochs) == 3 and len(set(epochs)) == 1


def test_after_a_timed_out_transaction_a_v2_abort_gets_the_new_epoch_and_a_commit_is_fenced(make_cluster):
    """The coordinator aborts a transaction open past its timeout with a bumped epoch. The producer's own
    EndTxn v5 abort, with the epoch it had, is then a retry of that abort; a commit is fenced (KAFKA-20785)."""
    cluster = make_cluster(brokers=1, config={"transaction.state.log.num.partitions": 1})
    cluster.create_topic("out", partitions=1)
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(InitProducerIdRequest(transactional_id=TID, transaction_timeout=datetime.timedelta(
            milliseconds=300), producer_id=-1, producer_epoch=-1))
        pid, epoch = answer.producer_id, answer.producer_epoch
        assert produce(client, pid, epoch, 0) == ErrorCode.none
        broker = cluster.brokers[cluster.node_ids[0]]

        async def aborted() -> None:
            while broker.transactions.txns[TID].state.name != "COMPLETE_ABORT":
                await asyncio.sleep(0.05)
        cluster.run(asyncio.wait_for(aborted(), 10))
        assert end_txn(client, pid, epoch, commit=True)[0] == ErrorCode.producer_fenced
        assert end_txn(client, pid, epoch, commit=False) == (ErrorCode.none, pid, epoch + 1)
        assert produce(client, pid, epoch + 1, 0) == ErrorCode.none
        assert end_txn(client, pid, epoch + 1, commit=True) == (ErrorCode.none, pid, epoch + 2)
    assert marker_epochs(cluster) == [epoch + 1, epoch + 2]
