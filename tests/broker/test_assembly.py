"""A cluster assembled in this process with no thread and no listener (``minikafka.assembly``):
three brokers on one event loop replicate an acks=all write by method calls, a clean stop hands
leadership to an in-sync follower that holds the records, and a broker's injected faults
outlive a restart of the cluster, as in ``Cluster`` (which builds its brokers the same way)."""

from __future__ import annotations

import asyncio
import datetime
import threading
from typing import Any

import pytest

from minikafka.assembly import Assembly
from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.records import Record, build_batch

PRODUCE, METADATA = 0, 3


def produce(topic: str, *values: bytes) -> Any:
    """An acks=all Produce v9 of one batch to partition 0."""
    batch = build_batch([Record(offset=i, timestamp=1_700_000_000_000, key=None, value=v)
                         for i, v in enumerate(values)])
    module = codec.request_module(PRODUCE, 9)
    data = codec.entity(module, "PartitionProduceData", index=0, records=batch)
    topics = (codec.entity(module, "TopicProduceData", name=topic, partition_data=(data,)),)
    return codec.downgrade(codec.request_class(PRODUCE, 9), transactional_id=None, acks=-1,
                           timeout=datetime.timedelta(seconds=10), topic_data=topics)


def metadata(topic: str) -> Any:
    module = codec.request_module(METADATA, 12)
    wanted = (codec.entity(module, "MetadataRequestTopic", name=topic, topic_id=None),)
    return codec.downgrade(codec.request_class(METADATA, 12), topics=wanted, allow_auto_topic_creation=False,
                           include_topic_authorized_operations=False)


def three_brokers() -> Assembly:
    assembly = Assembly({"min.insync.replicas": 2})
    for node_id in (1, 2, 3):
        assembly.add_broker(node_id, background=True)  # replica fetchers and ISR watch running
    return assembly


def test_three_brokers_on_one_loop_replicate_and_fail_over_without_a_thread():
    threads = threading.active_count()

    async def scenario() -> dict[str, Any]:
        async with three_brokers() as cluster:
            cluster.create_topic("orders", 1, 3)
            info = cluster.metadata.topics["orders"].partitions[0]
            leader = info.leader
            written = await asyncio.wait_for(cluster.call(produce("orders", b"a", b"b", b"c"), node_id=leader), 15)
            ends = {n: b.local_replica("orders", 0).log_end_offset for n, b in cluster.brokers.items()}
            await cluster.stop_broker(leader)
            successor = cluster.brokers[info.leader]
            seen = await cluster.call(metadata("orders"), node_id=info.leader)
            return {"error": written.responses[0].partition_responses[0].error_code, "ends": ends,
                    "threads": threading.active_count(), "leader": (leader, info.leader), "isr": list(info.isr),
                    "successor_end": successor.local_replica("orders", 0).log_end_offset,
                    "seen": (seen.topics[0].partitions[0].leader_id, sorted(b.node_id for b in seen.brokers))}
    found = asyncio.run(scenario())
    assert found["error"] == ErrorCode.none
    assert found["ends"] == {1: 3, 2: 3, 3: 3}, "acks=all answered once every in-sync replica had the batch"
    assert found["threads"] == threads, "the brokers run on the caller's loop"
    old, new = found["leader"]
    assert new not in (old, -1) and old not in found["isr"]
    assert found["successor_end"] == 3, "the new leader holds what the old one acknowledged"
    assert found["seen"] == (new, sorted({1, 2, 3} - {old}))


def test_a_brokers_injected_faults_outlive_a_restart_of_the_cluster():
    async def scenario() -> tuple[int, int]:
        first = Assembly()
        first.add_broker(1)
        first.dispatchers[1].faults.set_latency(250)
        await first.close()
        second = Assembly(faults=first.faults)
        second.add_broker(1)
        try:
            return first.dispatchers[1].faults.latency_ms, second.dispatchers[1].faults.latency_ms
        finally:
            await second.close()
    assert asyncio.run(scenario()) == (250, 250)


def test_stopping_a_broker_that_is_not_running_says_so():
    async def scenario() -> None:
        async with Assembly() as cluster:
            cluster.add_broker(1)
            await cluster.stop_broker(2)
    with pytest.raises(ValueError, match="broker 2 is not running"):
        asyncio.run(scenario())
