"""A broker process applies the committed metadata records to its own replicas (no sockets: the
observer is fed Fetch answers as the quorum leader would send them)."""

from __future__ import annotations

import uuid
from dataclasses import asdict

import pytest

from minikafka.brokerproc.process import BrokerMetadata, BrokerProcess, BrokerSettings
from minikafka.config import BrokerConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.kraft import snapshots
from minikafka.kraft.brokers import BrokerRegistry
from minikafka.kraft.image import MetadataImage
from minikafka.kraft.messages import FetchResponse, FetchSnapshotResponse
from minikafka.kraft.records import REGISTER_BROKER, UNFENCE_BROKER, change_record, decode, metadata_record
from minikafka.metadata import ClusterMetadata, PartitionInfo, TopicInfo
from minikafka.records import build_batch


def batch(records, base_offset: int, epoch: int = 1) -> bytes:
    for i, record in enumerate(records):
        record.offset = base_offset + i
    return build_batch(records, base_offset=base_offset, partition_leader_epoch=epoch)


def answer(data: bytes, high_watermark: int) -> FetchResponse:
    return FetchResponse(ErrorCode.none, 4, 1, high_watermark, records=data)


def registration(broker_id: int, epoch: int) -> list:
    endpoint = {"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9000 + broker_id, "securityProtocol": 0}
    return [metadata_record(REGISTER_BROKER, 0, brokerId=broker_id, brokerEpoch=epoch, incarnationId=str(uuid.uuid4()),
                            endPoints=[endpoint], rack=None, fenced=True),
            metadata_record(UNFENCE_BROKER, 0, id=broker_id, epoch=epoch)]


def test_committed_records_open_re_lead_and_drop_the_replicas(tmp_path):
    process = BrokerProcess(BrokerSettings(1, "127.0.0.1", 0, {4: ("127.0.0.1", 1)}, tmp_path / "b1"))
    broker, observer = process.broker, process.observer
    topic = TopicInfo("orders", str(uuid.uuid4()), [PartitionInfo(0, [1, 2], 1, [1, 2]),
                                                    PartitionInfo(1, [2, 3], 2, [2, 3])])
    first = [*registration(1, 0), *registration(2, 2), change_record({"type": "topic", "topic": asdict(topic)}, 0)]
    data = batch(first, 0)

    observer.take_fetch(answer(data, high_watermark=4))  # the topic record is not committed yet
    assert sorted(process.metadata.brokers) == [1, 2]
    assert broker.partitions == {}

    observer.take_fetch(answer(b"", high_watermark=5))
    part = broker.partitions[("orders", 0)]
    assert part.is_leader and ("orders", 1) not in broker.partitions
    assert process.metadata.controller_id == 1

    moved = PartitionInfo(0, [1, 2], 2, [1, 2], leader_epoch=1, partition_epoch=1)
    change = change_record({"type": "partition", "topic": "orders", "partition": asdict(moved)}, 0)
    observer.take_fetch(answer(batch([change], 5), high_watermark=6))
    assert not part.is_leader and part.leader_epoch == 1
    assert process.metadata.topics["orders"].partitions[0] is part.info  # one object, shared

    observer.take_fetch(answer(batch([change_record({"type": "remove_topic", "name": "orders"}, 0)], 6), 7))
    assert broker.partitions == {}
    assert not (tmp_path / "b1" / "orders-0").exists()
    assert observer.applied_offset == 6


def test_producer_ids_come_from_the_controllers_blocks_and_run_out_with_a_retriable_error(tmp_path):
    meta = BrokerMetadata(BrokerConfig())
    meta.from_controller = True
    meta.blocks.append((5000, 5002))
    assert [meta.next_producer_id(), meta.next_producer_id()] == [5000, 5001]
    assert meta.wanted.is_set()  # running low: the broker asks for the next block
    with pytest.raises(KafkaError) as refused:
        meta.next_producer_id()
    assert refused.value.code == ErrorCode.coordinator_load_in_progress
    meta.blocks.append((9000, 10000))
    assert meta.next_producer_id() == 9000


def test_a_snapshot_from_the_leader_replaces_the_metadata_and_the_replicas_follow_it(tmp_path):
    process = BrokerProcess(BrokerSettings(1, "127.0.0.1", 0, {4: ("127.0.0.1", 1)}, tmp_path / "b1"))
    old = TopicInfo("gone", str(uuid.uuid4()), [PartitionInfo(0, [1], 1, [1])])
    process.observer.take_fetch(answer(batch([*registration(1, 0), change_record(
        {"type": "topic", "topic": asdict(old)}, 0)], 0), high_watermark=3))
    assert ("gone", 0) in process.broker.partitions

    # the leader's state at offset 50: broker 1 registered, only topic "kept" (led by 1)
    leader = MetadataImage(BrokerRegistry(), ClusterMetadata(BrokerConfig()))
    kept = TopicInfo("kept", str(uuid.uuid4()), [PartitionInfo(0, [1], 1, [1], leader_epoch=3)])
    for i, record in enumerate([*registration(1, 0), change_record({"type": "topic", "topic": asdict(kept)}, 0)]):
        leader.apply(next(decode(batch([record], i))))
    data = snapshots.encode(leader.snapshot_records(0), 50, 2, 0)
    process.observer.take_snapshot(FetchSnapshotResponse(ErrorCode.none, 4, 2, 50, 2, data))

    assert set(process.metadata.topics) == {"kept"}
    assert set(process.broker.partitions) == {("kept", 0)}
    assert process.broker.partitions[("kept", 0)].is_leader
    assert process.observer.applied_offset == 49 and process.observer.log.end_offset == 50
    assert sorted(process.metadata.brokers) == [1]
