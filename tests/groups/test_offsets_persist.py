"""Committed offsets live in ``__consumer_offsets`` and survive restarts and failovers.

The first half drives the coordinator against an in-memory topic: what it writes is
exactly what a fresh coordinator needs to rebuild offsets and groups, tombstones
delete, transactional offsets wait for their marker, and retention expires offsets of
empty groups. The second half uses a real broker and real consumers: a restart from
the same data directory, the record format on disk, and a coordinator that moves to
another broker.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from minikafka.config import BrokerConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.groups import offsets
from minikafka.groups.coordinator import GroupCoordinator
from minikafka.groups.member import JoinRequest
from minikafka.groups.offsets import CommittedOffset
from minikafka.groups.offsets_topic import MemoryOffsetsTopic
from minikafka.clock import ManualClock
from minikafka.protocol import codec
from tests.groups.helpers import KafkaPythonMember, committed, create_topic, produce, wait_until
from tests.rawclient import RawClient

pytestmark = pytest.mark.timeout(60)


# -- the record format -----------------------------------------------------------------------
def test_java_hash_and_partition_placement():
    assert offsets.java_string_hash("hello") == 99162322
    assert offsets.java_string_hash("Aa") == offsets.java_string_hash("BB") == 2112
    assert offsets.java_string_hash("polygenelubricants") == -(2**31)  # Kafka's Utils.abs maps it to 0
    assert offsets.partition_for("polygenelubricants", 50) == 0
    assert offsets.partition_for("hello", 50) == 99162322 % 50


def test_offset_records_use_kafkas_layout():
    key = offsets.offset_key("g", "t", 3)
    assert key == struct.pack(">hh", 1, 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 3)
    value = offsets.offset_value(CommittedOffset(42, 5, "meta", 1000))
    assert value == struct.pack(">hqih", 3, 42, 5, 4) + b"meta" + struct.pack(">q", 1000)
    assert offsets.parse_offset_value(value) == CommittedOffset(42, 5, "meta", 1000)
    assert offsets.parse_key(key) == ("offset", ("g", "t", 3))
    assert offsets.parse_key(offsets.group_key("g")) == ("group", ("g",))


# -- the coordinator on an in-memory topic ------------------------------------------------------
def coordinator(topic: MemoryOffsetsTopic, **config) -> GroupCoordinator:
    settings = {"group.initial.rebalance.delay.ms": 0, **config}  # the clock stands still here
    return GroupCoordinator(1, BrokerConfig(settings), topic, clock=ManualClock())


def join_request(member_id: str = "") -> JoinRequest:
    return JoinRequest(member_id, None, "c", "/127.0.0.1", 10_000, 10_000, "consumer",
                       (("range", b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"),), False)


async def stable_member(c: GroupCoordinator, group: str) -> tuple[str, int]:
    joined = await c.join(group, join_request())
    await c.sync(group, joined.member_id, None, joined.generation_id, {joined.member_id: b"A"})
    return joined.member_id, joined.generation_id


def test_a_new_coordinator_rebuilds_offsets_and_groups_from_the_topic():
    topic = MemoryOffsetsTopic(topics={"t"})

    async def scenario():
        first = coordinator(topic)
        member, generation = await stable_member(first, "g")
        stamp = first.clock.wall_ms()
        result = await first.commit("g", member, None, generation, [("t", 0, CommittedOffset(7, -1, "m", stamp))])
        assert result == {("t", 0): ErrorCode.none}
        bad = await first.commit("g", member, None, generation, [("nope", 0, CommittedOffset(1))])
        assert bad == {("nope", 0): ErrorCode.unknown_topic_or_partition}
        with pytest.raises(KafkaError) as e:
            await first.commit("g", member, None, generation + 1, [("t", 0, CommittedOffset(9))])
        assert e.value.code == ErrorCode.illegal_generation
        second = coordinator(topic)
        [(t, p, committed, code)] = second.fetch("g", None)
        assert (t, p, committed.offset, committed.metadata, code) == ("t", 0, 7, "m", ErrorCode.none)
        group = second.groups["g"]
        assert str(group.state) == "Stable" and group.generation_id == generation and member in group.members
        second.heartbeat("g", member, None, generation)  # the member carries on without rejoining
    asyncio.run(scenario())


def test_deleted_groups_and_offsets_stay_deleted_after_reload():
    topic = MemoryOffsetsTopic(topics={"t", "u"})

    async def scenario():
        c = coordinator(topic)
        await c.commit("g", "", None, -1, [("t", 0, CommittedOffset(1)), ("u", 0, CommittedOffset(2))])
        assert c.delete_offsets("g", [("u", 0)]) == {("u", 0): ErrorCode.none}
        assert [row[:2] for row in coordinator(topic).fetch("g", None)] == [("t", 0)]
        c.delete_group("g")
        assert coordinator(topic).fetch("g", None) == [] and "g" not in coordinator(topic).groups
        with pytest.raises(KafkaError) as e:
            c.delete_group("g")
        assert e.value.code == ErrorCode.group_id_not_found
    asyncio.run(scenario())


def test_transactional_offsets_wait_for_the_commit_marker():
    topic = MemoryOffsetsTopic(topics={"t"})

    async def scenario():
        c = coordinator(topic)
        index = c.partition_of("g")
        await c.commit_transactional("g", 77, 0, "", None, -1, [("t", 0, CommittedOffset(5))])
        assert c.fetch("g", [("t", 0)], require_stable=True)[0][3] == ErrorCode.unstable_offset_commit
        assert c.fetch("g", [("t", 0)])[0][2] is None
        assert coordinator(topic).fetch("g", [("t", 0)], require_stable=True)[0][3] == ErrorCode.unstable_offset_commit
        topic.mark(index, 77, commit=True)
        c.complete_transaction(index, 77, commit=True)
        assert c.fetch("g", [("t", 0)])[0][2].offset == 5
        assert coordinator(topic).fetch("g", [("t", 0)])[0][2].offset == 5  # replay applies the marker
        await c.commit_transactional("g", 78, 0, "", None, -1, [("t", 0, CommittedOffset(9))])
        topic.mark(index, 78, commit=False)
        c.complete_transaction(index, 78, commit=False)
        assert c.fetch("g", [("t", 0)])[0][2].offset == 5 == coordinator(topic).fetch("g", [("t", 0)])[0][2].offset
    asyncio.run(scenario())


def test_offsets_of_an_empty_group_expire_after_retention():
    topic = MemoryOffsetsTopic(topics={"t"})

    async def scenario():
        c = coordinator(topic, **{"offsets.retention.minutes": 10})
        member, generation = await stable_member(c, "g")
        await c.commit("g", member, None, generation, [("t", 0, CommittedOffset(3, -1, "", c.clock.wall_ms()))])
        assert c.expire_offsets(c.clock.wall_ms() + 11 * 60_000) == 0  # the group is not empty
        c.leave("g", [(member, None)])
        empty_since = c.groups["g"].state_timestamp_ms
        assert c.expire_offsets(empty_since + 9 * 60_000) == 0
        assert c.expire_offsets(empty_since + 10 * 60_000) == 1
        assert "g" not in c.groups and "g" not in coordinator(topic).groups
    asyncio.run(scenario())


def test_not_coordinator_when_another_broker_leads_the_partition():
    topic = MemoryOffsetsTopic(topics={"t"})
    c = coordinator(topic)
    topic.leaders[c.partition_of("g")] = 2
    with pytest.raises(KafkaError) as e:
        c.heartbeat("g", "m", None, 1)
    assert e.value.code == ErrorCode.not_coordinator and c.coordinator_id("g") == 2


# -- a real broker ---------------------------------------------------------------------------------
def test_committed_offsets_survive_a_broker_restart(make_cluster, topic_name):
    cluster = make_cluster()
    create_topic(cluster.bootstrap_servers, topic_name, 2)
    first = produce(cluster.bootstrap_servers, topic_name, 100, 2, prefix="before")
    member = KafkaPythonMember(cluster.bootstrap_servers, "resumer", [topic_name], commit_every=1)
    wait_until(lambda: len(member.values()) == 100, 30, "the first 100 records")
    member.stop()
    assert sorted(member.values()) == sorted(first)
    cluster.restart()  # same data directory: __consumer_offsets is replayed
    assert committed(cluster.bootstrap_servers, "resumer", topic_name, 2) == {0: 50, 1: 50}
    second = produce(cluster.bootstrap_servers, topic_name, 20, 2, prefix="after")
    again = KafkaPythonMember(cluster.bootstrap_servers, "resumer", [topic_name])
    try:
        wait_until(lambda: len(again.values()) >= 20, 30, "the records produced after the restart")
        assert sorted(again.values()) == sorted(second), "resumed at the committed offsets, nothing replayed"
    finally:
        again.stop()


def test_commits_are_kafka_records_in_the_groups_partition(cluster, bootstrap, topic_name):
    from confluent_kafka import Consumer, TopicPartition
    create_topic(bootstrap, topic_name, 1)
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.structs import OffsetAndMetadata
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="on-disk", enable_auto_commit=False)
    consumer.commit({KafkaTopicPartition(topic_name, 0): OffsetAndMetadata(12, "hi", -1)})
    consumer.close()
    index = offsets.partition_for("on-disk", 50)
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                       "auto.offset.reset": "earliest"})
    reader.assign([TopicPartition("__consumer_offsets", index, 0)])
    msg = wait_until(lambda: reader.poll(0.5), 15, "the commit record")
    reader.close()
    assert msg.key() == offsets.offset_key("on-disk", topic_name, 0)
    version, offset, _epoch = struct.unpack_from(">hqi", msg.value())
    assert (version, offset) == (3, 12) and msg.value()[14:18] == b"\x00\x02hi"
    assert cluster.metadata.topic_config("__consumer_offsets")["cleanup.policy"] == "compact"


def test_coordinator_moves_with_its_partition_leader(make_cluster, topic_name):
    cluster = make_cluster(brokers=3)
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, topic_name, 1)
    group = "mover"
    with RawClient(bootstrap) as client:  # FindCoordinator creates __consumer_offsets
        found = client.request(codec.make(codec.request_class(10, 3), key=group, key_type=0))
    coordinator_id = found.node_id
    assert coordinator_id == cluster.metadata.topics["__consumer_offsets"].partitions[offsets.partition_for(group,
                                                                                                            50)].leader
    produce(bootstrap, topic_name, 10, 1)
    member = KafkaPythonMember(bootstrap, group, [topic_name], commit_every=1)
    wait_until(lambda: len(member.values()) == 10, 30, "10 records")
    member.stop()
    cluster.stop_broker(coordinator_id)
    live = cluster.bootstrap_servers
    assert committed(live, group, topic_name, 1) == {0: 10}, "the new coordinator replayed the replicated commits"
