"""OffsetCommit v10 and OffsetFetch v10 (Kafka 4.2, KIP-848's topic ids) called directly on one
in-process broker (``minikafka.assembly``): topics are named by id in the request and the answer,
an id nobody knows is UNKNOWN_TOPIC_ID per partition, and an offset committed by id reads
back by name with the older versions (and the other way round). ListOffsets v11's -6
(earliest offset pending upload to tiered storage) answers -1, as there is no tiered storage.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from minikafka.errors import ErrorCode
from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.protocol import codec

LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH = 2, 8, 9
GROUP = "billing"


def run(check: Callable[[DirectBroker], Awaitable[Any]]) -> Any:
    return assembly.run(check, {"auto.create.topics.enable": "false"}, {"orders": 2})


def topic_id(broker: DirectBroker, name: str) -> uuid.UUID:
    return uuid.UUID(broker.metadata.topics[name].topic_id)


def named(version: int, topic: str | uuid.UUID) -> dict[str, Any]:
    return {"topic_id": topic} if version >= 10 else {"name": topic}


def commit(version: int, topic: str | uuid.UUID, offsets: dict[int, int]) -> Any:
    """A commit from outside the group (generation -1, as tools and manually assigned consumers do)."""
    module = codec.request_module(OFFSET_COMMIT, version)
    parts = tuple(codec.entity(module, "OffsetCommitRequestPartition", partition_index=p, committed_offset=o,
                               committed_leader_epoch=-1, committed_metadata="")
                  for p, o in offsets.items())
    topics = (codec.entity(module, "OffsetCommitRequestTopic", partitions=parts, **named(version, topic)),)
    return codec.downgrade(codec.request_class(OFFSET_COMMIT, version), group_id=GROUP,
                           generation_id_or_member_epoch=-1, member_id="", group_instance_id=None, topics=topics)


def fetch(version: int, topic: str | uuid.UUID | None, partitions: tuple[int, ...] = (0, 1)) -> Any:
    """An OffsetFetch of one group (v8+ shape); ``topic`` None asks for every committed offset."""
    module = codec.request_module(OFFSET_FETCH, version)
    topics = None if topic is None else (
        codec.entity(module, "OffsetFetchRequestTopics", partition_indexes=partitions, **named(version, topic)),)
    group = codec.entity(module, "OffsetFetchRequestGroup", group_id=GROUP, member_id=None, member_epoch=-1,
                         topics=topics)
    return codec.downgrade(codec.request_class(OFFSET_FETCH, version), groups=(group,), require_stable=False)


def committed(answer: Any) -> dict[Any, dict[int, tuple[int, int]]]:
    """{topic name or id: {partition: (offset, error)}} from an OffsetFetch v8+ answer."""
    [group] = answer.groups
    assert group.error_code == ErrorCode.none
    return {getattr(t, "topic_id", None) or t.name: {p.partition_index: (p.committed_offset, p.error_code)
                                                     for p in t.partitions} for t in group.topics}


def test_a_commit_by_topic_id_reads_back_by_id_and_by_name():
    async def check(broker: DirectBroker) -> tuple[Any, ...]:
        orders = topic_id(broker, "orders")
        done = await broker.call(commit(10, orders, {0: 5, 1: 7}))
        return orders, done, await broker.call(fetch(10, orders)), await broker.call(fetch(9, "orders"))

    orders, done, by_id, by_name = run(check)
    assert type(done) is codec.response_class(OFFSET_COMMIT, 10)
    [topic] = done.topics
    assert topic.topic_id == orders
    assert [(p.partition_index, p.error_code) for p in topic.partitions] == [(0, ErrorCode.none), (1, ErrorCode.none)]
    assert committed(by_id) == {orders: {0: (5, ErrorCode.none), 1: (7, ErrorCode.none)}}
    assert committed(by_name) == {"orders": {0: (5, ErrorCode.none), 1: (7, ErrorCode.none)}}


def test_a_commit_by_name_reads_back_by_id_also_when_all_are_asked():
    async def check(broker: DirectBroker) -> tuple[Any, ...]:
        await broker.call(commit(9, "orders", {1: 3}))
        return topic_id(broker, "orders"), await broker.call(fetch(10, None))

    orders, everything = run(check)
    assert committed(everything) == {orders: {1: (3, ErrorCode.none)}}


def test_an_unknown_topic_id_is_unknown_topic_id_on_each_partition():
    stranger = uuid.uuid4()

    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        return await broker.call(commit(10, stranger, {0: 1, 1: 2})), await broker.call(fetch(10, stranger))

    done, fetched = run(check)
    [topic] = done.topics
    assert topic.topic_id == stranger
    assert {p.error_code for p in topic.partitions} == {ErrorCode.unknown_topic_id}
    assert committed(fetched) == {stranger: {0: (-1, ErrorCode.unknown_topic_id), 1: (-1, ErrorCode.unknown_topic_id)}}


def test_list_offsets_v11_earliest_pending_upload_is_none_without_tiered_storage():
    module = codec.request_module(LIST_OFFSETS, 11)
    asked = tuple(codec.entity(module, "ListOffsetsPartition", partition_index=0, timestamp=ts) for ts in (-6, -1))
    request = codec.make(codec.request_class(LIST_OFFSETS, 11), replica_id=-1, isolation_level=0, timeout=1000,
                         topics=(codec.entity(module, "ListOffsetsTopic", name="orders", partitions=asked),))

    async def check(broker: DirectBroker) -> Any:
        return await broker.call(request)

    answer = run(check)
    assert type(answer) is codec.response_class(LIST_OFFSETS, 11)
    pending_upload, latest = answer.topics[0].partitions
    assert [(p.error_code, p.offset) for p in (pending_upload, latest)] == [(ErrorCode.none, -1), (ErrorCode.none, 0)]
