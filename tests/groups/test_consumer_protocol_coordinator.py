"""Classic and consumer-protocol (KIP-848) groups side by side in one coordinator, on an in-memory
``__consumer_offsets``: one namespace of group ids, online migration between the two protocols,
commits checked by member epoch, the group epoch record written and replayed, ListGroups with
group types."""

from __future__ import annotations

import asyncio
import struct

import pytest

from minikafka.config import BrokerConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.clock import ManualClock
from minikafka.groups.consumer.group import Heartbeat
from minikafka.groups.consumer.coordinator import metadata_key, metadata_value, parse_metadata
from minikafka.groups.coordinator import GroupCoordinator
from minikafka.groups.embedded_protocol import encode_assignment, parse_assignment
from minikafka.groups.states import PREPARING
from minikafka.groups.offsets import CommittedOffset
from minikafka.groups.offsets_topic import MemoryOffsetsTopic
from tests.groups.test_offsets_persist import join_request, stable_member


def coordinator(topic: MemoryOffsetsTopic) -> GroupCoordinator:
    return GroupCoordinator(1, BrokerConfig({"group.initial.rebalance.delay.ms": 0}), topic, clock=ManualClock())


def memory_topic() -> MemoryOffsetsTopic:
    topic = MemoryOffsetsTopic(topics={"t"})
    topic.partitions["t"] = 2
    return topic


def join(c: GroupCoordinator, group: str, member: str):
    return c.consumer_heartbeat(group, Heartbeat(member, 0, rebalance_timeout_ms=1000, subscribed_topic_names=("t",),
                                                 owned=frozenset()))


def code_of(call) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        call()
    return info.value.code


def test_the_group_epoch_record_uses_kafkas_layout():
    assert metadata_key("g") == struct.pack(">hh", 3, 1) + b"g"
    assert metadata_value(7) == struct.pack(">hi", 0, 7) + b"\0"
    assert parse_metadata(metadata_key("g"), metadata_value(7)) == ("g", 7)
    assert parse_metadata(metadata_key("g"), None) == ("g", None)


def test_a_classic_member_joins_a_consumer_group_and_the_last_consumer_member_leaving_downgrades_it():
    async def scenario():
        c = coordinator(memory_topic())
        join(c, "g", "a")
        joined = await c.join("g", join_request())
        assert (joined.leader_id, joined.members, joined.protocol_name) == ("", (), "range"), "no leader: no assignor"
        assert joined.generation_id == c.consumer_groups.get("g").group_epoch == 2
        synced = await c.sync("g", joined.member_id, None, joined.generation_id, {})
        assert parse_assignment(synced.assignment) == c.consumer_groups.get("g").members[joined.member_id].assigned
        assert code_of(lambda: c.heartbeat("g", joined.member_id, None, 1)) == ErrorCode.illegal_generation
        c.consumer_heartbeat("g", Heartbeat("a", -1))
        assert c.consumer_groups.get("g") is None and c.groups["g"].state is PREPARING
        assert code_of(lambda: c.heartbeat("g", joined.member_id, None, 2)) == ErrorCode.rebalance_in_progress
        again = await c.join("g", join_request(joined.member_id))
        assert again.leader_id == joined.member_id and again.generation_id == 4, "epoch 3 (a leave), then a rebalance"
    asyncio.run(scenario())


def test_a_consumer_heartbeat_upgrades_a_classic_group_with_members_unless_the_policy_forbids_it():
    async def scenario(policy: str) -> GroupCoordinator:
        c = GroupCoordinator(1, BrokerConfig({"group.initial.rebalance.delay.ms": 0,
                                              "group.consumer.migration.policy": policy}), memory_topic(),
                             clock=ManualClock())
        joined = await c.join("g", join_request())
        await c.sync("g", joined.member_id, None, 1, {joined.member_id: encode_assignment([("t", 0), ("t", 1)])})
        if policy == "disabled":
            assert code_of(lambda: join(c, "g", "a")) == ErrorCode.group_id_not_found
            return c
        assert join(c, "g", "a").member_epoch == 2, "the classic generation 1 is the consumer group's first epoch"
        group = c.consumer_groups.get("g")
        assert group.members[joined.member_id].classic is not None and not c.groups["g"].members
        assert code_of(lambda: c.heartbeat("g", joined.member_id, None, 1)) == ErrorCode.rebalance_in_progress
        return c
    assert [m.classic is None for m in asyncio.run(scenario("upgrade")).consumer_groups.get("g").members.values()
            ] == [False, True]
    assert asyncio.run(scenario("disabled")).consumer_groups.get("g") is None


def test_an_empty_group_changes_protocol_and_keeps_its_offsets():
    async def scenario():
        c = coordinator(memory_topic())
        assert join(c, "g", "a").member_epoch == 1
        assert await c.commit("g", "a", None, 1, [("t", 0, CommittedOffset(5))]) == {("t", 0): ErrorCode.none}
        c.consumer_heartbeat("g", Heartbeat("a", -1))
        _member, _generation = await stable_member(c, "g")  # now a classic group
        assert c.fetch("g", [("t", 0)])[0][2].offset == 5
        assert c.consumer_groups.get("g") is None
    asyncio.run(scenario())


def test_commits_and_fetches_of_a_consumer_group_are_checked_by_member_epoch():
    async def scenario():
        c = coordinator(memory_topic())
        join(c, "g", "a")
        for epoch, version, code in ((0, 9, ErrorCode.stale_member_epoch), (1, 8, ErrorCode.unsupported_version)):
            with pytest.raises(KafkaError) as e:
                await c.commit("g", "a", None, epoch, [("t", 0, CommittedOffset(5))], api_version=version)
            assert e.value.code == code
        assert await c.commit("g", "a", None, 1, [("t", 0, CommittedOffset(5))]) == {("t", 0): ErrorCode.none}
        assert code_of(lambda: c.fetch("g", None, member_id="a", member_epoch=0)) == ErrorCode.stale_member_epoch
        assert c.fetch("g", None)[0][2].offset == 5  # a tool (no member id) may always read
    asyncio.run(scenario())


def test_a_new_coordinator_knows_the_group_is_a_consumer_group_at_its_epoch():
    async def scenario():
        topic = memory_topic()
        first = coordinator(topic)
        join(first, "g", "a")
        join(first, "g", "b")
        await first.commit("g", "a", None, 1, [("t", 0, CommittedOffset(3))])
        second = coordinator(topic)
        second.load(second.partition_of("g"))
        group = second.consumer_groups.get("g")
        assert group is not None and group.group_epoch == 2 and not group.members
        assert code_of(lambda: second.consumer_heartbeat("g", Heartbeat("a", 2))) == ErrorCode.unknown_member_id
        assert second.fetch("g", [("t", 0)])[0][2].offset == 3
        assert join(second, "g", "a").member_epoch == 3, "epochs go on from where they were"
    asyncio.run(scenario())


def test_list_groups_tells_the_types_apart_and_delete_removes_an_empty_consumer_group():
    async def scenario():
        c = coordinator(memory_topic())
        await stable_member(c, "old")
        join(c, "new", "a")
        listed = {g.group_id: (g.group_type, str(g.state)) for g in c.list_groups()}
        assert listed == {"old": ("classic", "Stable"), "new": ("consumer", "Stable")}
        assert [g.group_id for g in c.list_groups(types={"Consumer"})] == ["new"]
        assert c.describe("new") is None, "DescribeGroups knows classic groups only"
        assert code_of(lambda: c.delete_group("new")) == ErrorCode.non_empty_group
        c.consumer_heartbeat("new", Heartbeat("a", -1))
        c.delete_group("new")
        assert c.consumer_groups.get("new") is None
        assert code_of(lambda: c.consumer_describe("new")) == ErrorCode.group_id_not_found
    asyncio.run(scenario())
