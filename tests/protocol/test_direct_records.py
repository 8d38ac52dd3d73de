"""Produce, Fetch and ListOffsets handlers called directly on one in-process broker
(``minikafka.assembly``): no socket, no thread, no Cluster.

Records go in as the v2 batches a producer sends and come back as the bytes a consumer
reads. Produce and Fetch name topics by name up to v12 and by topic id from v13 (KIP-516),
so both shapes are asked; the wire tests cover the same APIs end to end with real clients.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from minikafka.errors import ErrorCode
from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.protocol import codec
from minikafka.records import Record, build_batch, iter_records, split_batches

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
LATEST, EARLIEST = -1, -2  # ListOffsets' special timestamps
SECOND = datetime.timedelta(seconds=1)


def run(check: Callable[[DirectBroker], Awaitable[Any]]) -> Any:
    return assembly.run(check, {"auto.create.topics.enable": "false"}, {"orders": 2})


def batch(*values: bytes) -> bytes:
    return build_batch([Record(offset=i, timestamp=1_700_000_000_000 + i, key=None, value=v)
                        for i, v in enumerate(values)])


def produce(version: int, topic: str | uuid.UUID, partition: int, records: bytes, acks: int = -1) -> Any:
    """A Produce request for one partition; ``topic`` is a name up to v12, an id from v13."""
    module = codec.request_module(PRODUCE, version)
    data = codec.entity(module, "PartitionProduceData", index=partition, records=records)
    named = {"topic_id": topic} if version >= 13 else {"name": topic}
    topics = (codec.entity(module, "TopicProduceData", partition_data=(data,), **named),)
    return codec.downgrade(codec.request_class(PRODUCE, version), transactional_id=None, acks=acks,
                           timeout=SECOND, topic_data=topics)


def fetch(version: int, topic: str | uuid.UUID, partition: int, offset: int) -> Any:
    """A consumer's Fetch of one partition from ``offset``, answered at once (min_bytes 0)."""
    module = codec.request_module(FETCH, version)
    wanted = codec.entity(module, "FetchPartition", partition=partition, fetch_offset=offset,
                          partition_max_bytes=1 << 20)
    named = {"topic_id": topic} if version >= 13 else {"topic": topic}
    topics = (codec.entity(module, "FetchTopic", partitions=(wanted,), **named),)
    return codec.downgrade(codec.request_class(FETCH, version), max_wait=datetime.timedelta(0), min_bytes=0,
                           topics=topics, forgotten_topics_data=())


def list_offsets(partition: int, timestamp: int) -> Any:
    module = codec.request_module(LIST_OFFSETS, 10)
    wanted = codec.entity(module, "ListOffsetsPartition", partition_index=partition, timestamp=timestamp)
    topics = (codec.entity(module, "ListOffsetsTopic", name="orders", partitions=(wanted,)),)
    return codec.make(codec.request_class(LIST_OFFSETS, 10), replica_id=-1, isolation_level=0, topics=topics,
                      timeout=SECOND)


def values(records: bytes | None) -> list[tuple[int, bytes | None]]:
    """(offset, value) of every record in a Fetch answer's record batches."""
    return [(r.offset, r.value) for b in split_batches(records or b"") for r in iter_records(b)]


def topic_id(broker: DirectBroker, name: str) -> uuid.UUID:
    return uuid.UUID(broker.metadata.topics[name].topic_id)


@pytest.mark.parametrize("version", [3, 9, 12])
def test_produce_by_name_appends_batches_one_after_the_other(version):
    async def check(broker: DirectBroker) -> list[Any]:
        first = await broker.call(produce(version, "orders", 1, batch(b"a", b"b")))
        second = await broker.call(produce(version, "orders", 1, batch(b"c")))
        return [a.responses[0].partition_responses[0] for a in (first, second)]

    answers = run(check)
    assert [(p.index, p.error_code, p.base_offset) for p in answers] == [
        (1, ErrorCode.none, 0), (1, ErrorCode.none, 2)]


def test_produce_v13_and_fetch_v18_name_the_topic_by_id():
    async def check(broker: DirectBroker) -> tuple[Any, Any, Any]:
        orders = topic_id(broker, "orders")
        produced = await broker.call(produce(13, orders, 0, batch(b"x", b"y")))
        fetched = await broker.call(fetch(18, orders, 0, 0))
        unknown = await broker.call(produce(13, uuid.uuid4(), 0, batch(b"z")))
        return produced, fetched, unknown

    produced, fetched, unknown = run(check)
    assert produced.responses[0].partition_responses[0].error_code == ErrorCode.none
    [topic] = fetched.responses
    [part] = topic.partitions
    assert (part.error_code, part.high_watermark, values(part.records)) == (ErrorCode.none, 2, [(0, b"x"), (1, b"y")])
    assert unknown.responses[0].partition_responses[0].error_code == ErrorCode.unknown_topic_id


@pytest.mark.parametrize("version", [4, 11, 12])
def test_fetch_by_name_reads_from_the_offset_asked(version):
    async def check(broker: DirectBroker) -> Any:
        await broker.call(produce(9, "orders", 0, batch(b"a", b"b", b"c")))
        await broker.call(produce(9, "orders", 0, batch(b"d")))
        return await broker.call(fetch(version, "orders", 0, 3))

    answer = run(check)
    assert type(answer) is codec.response_class(FETCH, version)
    [part] = answer.responses[0].partitions
    assert (part.error_code, part.high_watermark) == (ErrorCode.none, 4)
    assert values(part.records) == [(3, b"d")]  # from the batch holding the offset asked, not the first


def test_fetch_past_the_log_end_is_out_of_range():
    async def check(broker: DirectBroker) -> Any:
        await broker.call(produce(9, "orders", 0, batch(b"a")))
        return await broker.call(fetch(12, "orders", 0, 5))

    [part] = run(check).responses[0].partitions
    assert part.error_code == ErrorCode.offset_out_of_range


def test_produce_to_an_unknown_topic_or_partition_is_refused_per_partition():
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        missing = await broker.call(produce(9, "missing", 0, batch(b"a")))
        beyond = await broker.call(produce(9, "orders", 7, batch(b"a")))
        return missing, beyond

    for answer in run(check):
        assert answer.responses[0].partition_responses[0].error_code == ErrorCode.unknown_topic_or_partition


def test_produce_with_acks_0_gets_no_answer_but_is_written():
    async def check(broker: DirectBroker) -> tuple[Any, Any]:
        silent = await broker.call(produce(9, "orders", 0, batch(b"quiet"), acks=0))
        return silent, await broker.call(fetch(12, "orders", 0, 0))

    silent, fetched = run(check)
    assert silent is None
    assert values(fetched.responses[0].partitions[0].records) == [(0, b"quiet")]


def test_list_offsets_answers_the_earliest_and_latest_offsets():
    async def check(broker: DirectBroker) -> list[Any]:
        await broker.call(produce(9, "orders", 0, batch(b"a", b"b", b"c")))
        answers = [await broker.call(list_offsets(0, t)) for t in (EARLIEST, LATEST)]
        return [a.topics[0].partitions[0] for a in answers]

    earliest, latest = run(check)
    assert (earliest.error_code, earliest.offset) == (ErrorCode.none, 0)
    assert (latest.error_code, latest.offset) == (ErrorCode.none, 3)
