"""The consumer group protocol (KIP-848) without a network: heartbeats as method calls, made-up times.

Each test names the rule it protects: epochs, incremental reconciliation (revoke first,
assign once released, a partition never has two owners), fencing, session and rebalance
timeouts, static membership, the commit rules, and the server-side assignors.
"""

from __future__ import annotations

import random

import pytest

from minikafka.errors import ErrorCode, KafkaError
from minikafka.groups.consumer.group import ConsumerGroup, ConsumerGroupSettings, Heartbeat
from minikafka.groups.consumer.assignors import range_, uniform
from minikafka.groups.consumer.states import MEMBER_TRANSITIONS, ConsumerGroupState, MemberState

SETTINGS = ConsumerGroupSettings(session_timeout_ms=45_000, heartbeat_interval_ms=5_000)
TOPICS = {"t": 4}


def new_group(topics=TOPICS, settings=SETTINGS) -> ConsumerGroup:
    return ConsumerGroup("g", settings, lambda: dict(topics))


def join(group, member_id, now=0, topics=("t",), **kw):
    return group.heartbeat(Heartbeat(member_id, 0, rebalance_timeout_ms=30_000, subscribed_topic_names=topics,
                                     owned=frozenset(), **kw), now)


def beat(group, member_id, epoch, owned=None, now=0, **kw):
    return group.heartbeat(Heartbeat(member_id, epoch, owned=owned, **kw), now)


def tps(*indexes, topic="t"):
    return frozenset((topic, i) for i in indexes)


def error_of(call) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        call()
    return info.value.code


def owners(group) -> dict:
    out: dict = {}
    for m in group.members.values():
        for tp in m.owns():
            out.setdefault(tp, []).append(m.member_id)
    return out


# -- joining and the epochs ------------------------------------------------------------------
def test_the_first_member_gets_every_partition_at_the_first_group_epoch():
    group = new_group()
    result = join(group, "a")
    assert (result.member_epoch, result.assignment) == (1, tps(0, 1, 2, 3))
    assert (group.group_epoch, group.assignment_epoch, group.state) == (1, 1, ConsumerGroupState.STABLE)


def test_a_second_member_waits_while_the_first_revokes_only_what_moves():
    group = new_group()
    join(group, "a")
    second = join(group, "b")
    assert group.group_epoch == 2 and second.member_epoch == 2
    assert second.assignment == frozenset(), "b's partitions are still a's: unreleased"
    assert group.members["b"].state is MemberState.UNRELEASED_PARTITIONS
    first = beat(group, "a", 1)
    kept = first.assignment
    assert first.member_epoch == 1 and len(kept) == 2, "a keeps its epoch and the partitions that stay"
    assert group.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert group.state is ConsumerGroupState.RECONCILING
    still = beat(group, "b", 2)
    assert still.assignment is None, "nothing changed for b: a has not revoked yet"
    acked = beat(group, "a", 1, owned=kept)
    assert (acked.member_epoch, acked.assignment) == (2, None)
    got = beat(group, "b", 2)
    assert got.assignment == tps(0, 1, 2, 3) - kept
    assert group.state is ConsumerGroupState.STABLE
    assert all(len(v) == 1 for v in owners(group).values())


def test_a_leaving_member_hands_its_partitions_to_the_others_at_a_new_epoch():
    group = new_group()
    join(group, "a")
    join(group, "b")
    kept = beat(group, "a", 1).assignment
    beat(group, "a", 1, owned=kept)
    beat(group, "b", 2)
    left = beat(group, "b", -1)
    assert left.member_epoch == -1 and "b" not in group.members and group.group_epoch == 3
    assert beat(group, "a", 2).assignment == tps(0, 1, 2, 3)


def test_a_new_partition_of_a_subscribed_topic_bumps_the_group_epoch():
    topics = dict(TOPICS)
    group = ConsumerGroup("g", SETTINGS, lambda: dict(topics))
    join(group, "a")
    topics["t"] = 6
    result = beat(group, "a", 1)
    assert (group.group_epoch, result.member_epoch, result.assignment) == (2, 2, tps(0, 1, 2, 3, 4, 5))


def test_a_regex_subscription_follows_topics_as_they_are_created():
    topics = {"orders-eu": 1}
    group = ConsumerGroup("g", SETTINGS, lambda: dict(topics))
    result = group.heartbeat(Heartbeat("a", 0, rebalance_timeout_ms=1000, subscribed_topic_regex="orders-.*",
                                       owned=frozenset()), 0)
    assert result.assignment == tps(0, topic="orders-eu")
    topics["orders-us"], topics["payments"] = 1, 1
    assert beat(group, "a", 1).assignment == tps(0, topic="orders-eu") | tps(0, topic="orders-us")


# -- fencing ---------------------------------------------------------------------------------
def test_fencing_rules_of_the_member_epoch():
    group = new_group()
    join(group, "a")
    assert error_of(lambda: beat(group, "a", 7)) == ErrorCode.fenced_member_epoch
    assert error_of(lambda: beat(group, "nobody", 1)) == ErrorCode.unknown_member_id
    join(group, "b")
    kept = beat(group, "a", 1).assignment
    assert beat(group, "a", 1, owned=kept).member_epoch == 2
    lost = beat(group, "a", 1, owned=kept)
    assert lost.member_epoch == 2, "the previous epoch with a subset of the partitions: a lost response"
    assert error_of(lambda: beat(group, "a", 1, owned=tps(0, 1, 2, 3))) == ErrorCode.fenced_member_epoch


def test_a_fenced_member_rejoins_with_epoch_zero_and_gets_its_partitions_back():
    group = new_group()
    join(group, "a")
    assert error_of(lambda: beat(group, "a", 9)) == ErrorCode.fenced_member_epoch
    again = join(group, "a")
    assert (again.member_epoch, again.assignment) == (1, tps(0, 1, 2, 3))
    assert group.group_epoch == 1, "same subscription: no new group epoch"


@pytest.mark.parametrize("heartbeat, code", [
    (Heartbeat("a", 0, subscribed_topic_names=("t",), owned=frozenset()), ErrorCode.invalid_request),
    (Heartbeat("a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",), owned=None), ErrorCode.invalid_request),
    (Heartbeat("a", 0, rebalance_timeout_ms=1, owned=frozenset()), ErrorCode.invalid_request),
    (Heartbeat("", 1), ErrorCode.invalid_request),
    (Heartbeat("a", -3), ErrorCode.invalid_request),
    (Heartbeat("a", -2), ErrorCode.invalid_request),
    (Heartbeat("a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",), owned=frozenset(),
               server_assignor="sticky"), ErrorCode.unsupported_assignor),
    (Heartbeat("a", 0, rebalance_timeout_ms=1, subscribed_topic_regex="(", owned=frozenset()),
     ErrorCode.invalid_regular_expression),
])
def test_malformed_heartbeats_get_kafkas_error(heartbeat, code):
    assert error_of(lambda: new_group().heartbeat(heartbeat, 0)) == code


# -- timeouts ----------------------------------------------------------------------------------
def test_a_silent_member_is_removed_after_the_session_timeout():
    group = new_group()
    join(group, "a", now=0)
    join(group, "b", now=0)
    beat(group, "a", 1, now=40_000)
    assert group.next_deadline() == 45_000
    assert group.tick(45_000) == ["b"] and group.group_epoch == 3


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_removed():
    group = new_group()
    join(group, "a", now=0)
    join(group, "b", now=1000)
    beat(group, "a", 1, now=2000)  # must revoke; the rebalance timeout (30 s) starts
    beat(group, "a", 1, owned=tps(0, 1, 2, 3), now=20_000)  # still owns them
    assert group.tick(31_900) == []
    assert group.tick(32_000) == ["a"]
    assert beat(group, "b", 2, now=32_000).assignment == tps(0, 1, 2, 3)


# -- static membership (group.instance.id) --------------------------------------------------------
def test_a_static_member_leaving_with_minus_two_keeps_its_partitions_for_its_successor():
    group = new_group()
    join(group, "a", instance_id="i-1")
    assert beat(group, "a", -2, instance_id="i-1").member_epoch == -2
    assert group.members["a"].assigned == tps(0, 1, 2, 3) and group.group_epoch == 1
    back = join(group, "a2", instance_id="i-1")
    assert (back.member_epoch, back.assignment) == (1, tps(0, 1, 2, 3)), "no rebalance: same partitions"
    assert "a" not in group.members and group.group_epoch == 1


def test_a_second_instance_with_the_same_instance_id_is_refused_while_the_first_is_in():
    group = new_group()
    join(group, "a", instance_id="i-1")
    assert error_of(lambda: join(group, "x", instance_id="i-1")) == ErrorCode.unreleased_instance_id
    assert error_of(lambda: beat(group, "x", 1, instance_id="i-1")) == ErrorCode.fenced_instance_id
    assert error_of(lambda: beat(group, "a", 1, instance_id="i-9")) == ErrorCode.unknown_member_id


def test_a_static_member_that_does_not_come_back_is_removed_after_the_session_timeout():
    group = new_group()
    join(group, "a", instance_id="i-1", now=0)
    join(group, "b", now=0)
    beat(group, "a", -2, instance_id="i-1", now=1000)
    beat(group, "b", 2, now=30_000)
    assert group.tick(44_000) == []
    assert group.tick(45_000) == ["a"]


# -- commits: the member epoch is the generation ------------------------------------------------
def test_offset_commits_must_carry_the_current_member_epoch():
    group = new_group()
    join(group, "a")
    group.check_commit("a", None, 1)
    assert error_of(lambda: group.check_commit("a", None, 0)) == ErrorCode.stale_member_epoch
    assert error_of(lambda: group.check_commit("a", None, 1, api_version=8)) == ErrorCode.unsupported_version
    assert error_of(lambda: group.check_commit("z", None, 1)) == ErrorCode.unknown_member_id
    assert error_of(lambda: group.check_fetch("a", 3)) == ErrorCode.stale_member_epoch
    group.check_fetch(None, -1)  # a tool reading the offsets
    beat(group, "a", -1)
    group.check_commit("", None, -1)  # the group is empty: tools may reset offsets


# -- the invariant, under random comings and goings -------------------------------------------------
def test_no_partition_ever_has_two_owners_and_everyone_converges():
    rng = random.Random(848)
    group = new_group({"t": 7, "u": 3})
    epochs: dict[str, int] = {}
    for step in range(400):
        member = f"m{rng.randrange(5)}"
        if member not in group.members or rng.random() < 0.05:
            epochs[member] = join(group, member, topics=("t", "u")).member_epoch
        elif rng.random() < 0.05:
            beat(group, member, -1)
            del epochs[member]
        else:
            m = group.members[member]
            epochs[member] = beat(group, member, epochs[member], owned=frozenset(m.assigned)).member_epoch
        assert all(len(v) == 1 for v in owners(group).values()), f"two owners at step {step}"
    for _ in range(4):
        for member in list(group.members):
            epochs[member] = beat(group, member, epochs[member],
                                  owned=frozenset(group.members[member].assigned)).member_epoch
    assert group.state is ConsumerGroupState.STABLE
    assert set(owners(group)) == {("t", i) for i in range(7)} | {("u", i) for i in range(3)}


def test_every_member_state_appears_in_the_transition_table():
    states = {src for src, _, _ in MEMBER_TRANSITIONS} | {dst for _, _, dst in MEMBER_TRANSITIONS}
    assert states == set(MemberState)


# -- the assignors ---------------------------------------------------------------------------------
def test_uniform_is_balanced_and_moves_little_when_a_member_joins():
    subs = {m: {"t"} for m in "abc"}
    before = uniform(subs, {"t": 9}, {})
    assert sorted(len(v) for v in before.values()) == [3, 3, 3]
    after = uniform({**subs, "d": {"t"}}, {"t": 9}, before)
    assert sorted(len(v) for v in after.values()) == [2, 2, 2, 3]
    moved = sum(len(before[m] - after[m]) for m in "abc")
    assert moved == 2, "only the partitions the new member takes move"


def test_uniform_respects_each_members_subscription():
    out = uniform({"a": {"t"}, "b": {"t", "u"}}, {"t": 2, "u": 2}, {})
    assert {tp[0] for tp in out["a"]} == {"t"} and len(out["a"]) == len(out["b"]) == 2


def test_range_gives_contiguous_co_partitioned_ranges_in_member_order():
    out = range_({"b": {"t", "u"}, "a": {"t", "u"}}, {"t": 3, "u": 3}, {})
    assert out["a"] == {("t", 0), ("t", 1), ("u", 0), ("u", 1)} and out["b"] == {("t", 2), ("u", 2)}


def test_a_group_uses_the_assignor_its_members_ask_for():
    group = new_group()
    join(group, "a", server_assignor="range")
    join(group, "b", server_assignor="range")
    assert group.assignor == "range"
    assert group.target == {"a": tps(0, 1), "b": tps(2, 3)}
