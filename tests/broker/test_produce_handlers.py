"""Produce and ListOffsets alone (issue 27): each handler gets a ``Caller`` and a fake port, never a
broker, a socket or a Cluster. Requests are built at a client's version and lifted as dispatch does."""

from __future__ import annotations

import asyncio
import datetime
import importlib
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode, InvalidRecords, KafkaError
from minikafka.handlers import list_offsets, produce, registry
from minikafka.handlers.dispatch import lift
from minikafka.handlers.ports import Caller, OffsetsPort, ProducePort
from minikafka.security.acl import Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.port_checks import assert_provides

TOPIC_ID = uuid.uuid4()


@dataclass
class Appended:
    base_offset: int
    log_append_time: int
    log_start_offset: int


class FakeLog:
    """Both ports: appends land at offset 40 (LogAppendTime 1700000000000); ``error`` is raised instead."""

    def __init__(self, error: KafkaError | None = None) -> None:
        self.error, self.calls = error, list[tuple[Any, ...]]()

    def topic_name_of(self, topic_id: str) -> str | None:
        return "orders" if topic_id == str(TOPIC_ID) else None

    def topic_id_of(self, topic: str) -> str | None:
        return str(TOPIC_ID) if topic == "orders" else None

    async def append_batch(self, topic: str, index: int, batch: bytes, acks: int, timeout: datetime.timedelta,
                           transactional_id: str | None, may_add_partition: bool) -> Appended:
        self.calls.append((topic, index, batch, acks, transactional_id, may_add_partition))
        if self.error is not None:
            raise self.error
        return Appended(40, 1_700_000_000_000, 3)

    def list_offset(self, topic: str, index: int, timestamp: int, committed: bool) -> tuple[int, int, int]:
        self.calls.append((topic, index, timestamp, committed))
        if self.error is not None:
            raise self.error
        return (-1, 90 if committed else 100, 5) if timestamp == -1 else (timestamp, 7, 5)


def kio(api: str, version: int, name: str) -> Any:
    return getattr(importlib.import_module(f"kio.schema.{api}.v{version}.request"), name)


def run(handler: Any, api_key: int, version: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, version, client_id="test", principal="User:alice", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


def produce_request(version: int, acks: int = -1, transactional_id: str | None = None) -> Any:
    data = kio("produce", version, "PartitionProduceData")(index=2, records=b"batch bytes")
    if version >= 13:
        topic = kio("produce", version, "TopicProduceData")(topic_id=TOPIC_ID, partition_data=(data,))
    else:
        topic = kio("produce", version, "TopicProduceData")(name="orders", partition_data=(data,))
    return kio("produce", version, "ProduceRequest")(
        transactional_id=transactional_id, acks=acks, timeout=datetime.timedelta(seconds=5), topic_data=(topic,))


@pytest.mark.parametrize("port", [ProducePort, OffsetsPort])
def test_broker_and_fake_provide_the_ports(port):
    assert_provides(port, Broker, FakeLog)
    assert isinstance(registry.HANDLERS[0], registry.PortHandler)
    assert isinstance(registry.HANDLERS[2], registry.PortHandler)


@pytest.mark.parametrize("version", [3, 12])
def test_a_write_lands_where_the_port_put_it(version):
    port = FakeLog()
    answer = run(produce.Produce(port), 0, version, produce_request(version, transactional_id="tx"))
    (topic,) = answer.responses
    (part,) = topic.partition_responses
    assert (topic.name, part.index, part.error_code, part.base_offset) == ("orders", 2, ErrorCode.none, 40)
    assert part.log_append_time == datetime.datetime.fromtimestamp(1_700_000_000, datetime.UTC)
    assert getattr(part, "log_start_offset", None) == (3 if version >= 5 else None)  # a v5 field
    assert port.calls == [("orders", 2, b"batch bytes", -1, "tx", version >= 12)]  # v12 may add to a transaction


def test_v13_names_the_topic_by_id_and_an_unknown_id_is_refused_without_a_write():
    port = FakeLog()
    answer = run(produce.Produce(port), 0, 13, produce_request(13))
    assert answer.responses[0].topic_id == TOPIC_ID and answer.responses[0].partition_responses[0].error_code == 0
    unknown = produce_request(13)
    unknown = type(unknown)(transactional_id=None, acks=-1, timeout=unknown.timeout,
                            topic_data=(type(unknown.topic_data[0])(topic_id=uuid.uuid4(),
                                                                   partition_data=unknown.topic_data[0].partition_data),))
    port.calls.clear()
    answer = run(produce.Produce(port), 0, 13, unknown)
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.unknown_topic_id and port.calls == []


def test_acks_zero_gets_no_answer_and_bad_acks_no_write():
    port = FakeLog()
    assert run(produce.Produce(port), 0, 9, produce_request(9, acks=0)) is None
    port.calls.clear()
    answer = run(produce.Produce(port), 0, 9, produce_request(9, acks=2))
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.invalid_required_acks
    assert port.calls == []


def test_a_denied_write_never_reaches_the_port():
    port = FakeLog()
    answer = run(produce.Produce(port), 0, 9, produce_request(9), Acls((Operation.READ, ResourceType.TOPIC, "orders")))
    part = answer.responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.topic_authorization_failed and "orders" in part.error_message
    assert port.calls == []


def test_invalid_records_are_reported_one_by_one_from_v8():
    port = FakeLog(InvalidRecords("A compacted topic takes no record without a key.", [(0, "no key"), (2, "no key")]))
    part = run(produce.Produce(port), 0, 8, produce_request(8)).responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.invalid_record and part.base_offset == -1
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(0, "no key"), (2, "no key")]


def test_an_error_from_the_log_is_the_partitions_answer():
    port = FakeLog(KafkaError(ErrorCode.not_enough_replicas, "Only 1 in-sync replica; min.insync.replicas is 2."))
    part = run(produce.Produce(port), 0, 9, produce_request(9)).responses[0].partition_responses[0]
    assert (part.error_code, part.error_message) == (ErrorCode.not_enough_replicas,
                                                     "Only 1 in-sync replica; min.insync.replicas is 2.")


def list_request(version: int, timestamp: int, isolation: int = 0) -> Any:
    p = kio("list_offsets", version, "ListOffsetsPartition")(partition_index=1, timestamp=timestamp)
    t = kio("list_offsets", version, "ListOffsetsTopic")(name="orders", partitions=(p,))
    fields = {"replica_id": -1, "topics": (t,)}
    if version >= 2:
        fields["isolation_level"] = isolation
    if version >= 10:
        fields["timeout"] = datetime.timedelta(seconds=5)
    return kio("list_offsets", version, "ListOffsetsRequest")(**fields)


@pytest.mark.parametrize(("isolation", "end"), [(0, 100), (1, 90)])
def test_the_end_of_a_partition_is_the_high_watermark_or_the_last_stable_offset(isolation, end):
    port = FakeLog()
    part = run(list_offsets.ListOffsets(port), 2, 11, list_request(11, -1, isolation)).topics[0].partitions[0]
    assert (part.error_code, part.offset, part.leader_epoch, part.timestamp) == (ErrorCode.none, end, 5, -1)
    assert port.calls == [("orders", 1, -1, bool(isolation))]


def test_an_offset_by_time_and_an_old_version_without_the_epoch():
    part = run(list_offsets.ListOffsets(FakeLog()), 2, 1, list_request(1, 1_700_000_000_000)).topics[0].partitions[0]
    assert (part.offset, part.timestamp) == (7, 1_700_000_000_000)


def test_list_offsets_denied_or_failing_answers_minus_one():
    denied = run(list_offsets.ListOffsets(FakeLog()), 2, 11, list_request(11, -2),
                 Acls((Operation.WRITE, ResourceType.TOPIC, "orders"))).topics[0].partitions[0]
    assert (denied.error_code, denied.offset, denied.leader_epoch) == (ErrorCode.topic_authorization_failed, -1, -1)
    gone = run(list_offsets.ListOffsets(FakeLog(KafkaError(ErrorCode.not_leader_or_follower))), 2, 11,
               list_request(11, -2)).topics[0].partitions[0]
    assert (gone.error_code, gone.offset) == (ErrorCode.not_leader_or_follower, -1)
