"""The group state machine, driven by method calls and made-up clock times (no network).

Each test names the Kafka behaviour it protects: the JoinGroup/SyncGroup barrier,
generations, MEMBER_ID_REQUIRED (KIP-394), rebalance and session timeouts (KIP-62),
static membership (KIP-345), and that every state change follows ``TRANSITIONS``.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from minikafka.errors import ErrorCode, KafkaError
from minikafka.groups import states
from minikafka.groups.group import Group, GroupSettings
from minikafka.groups.member import JoinRequest, MemberIdRequired, subscribed_topics
from minikafka.groups.states import COMPLETING, DEAD, EMPTY, PREPARING, STABLE, TRANSITIONS


def run(test):
    """Run a test body inside an event loop (the group's futures need one)."""
    def wrapper(*args, **kwargs):
        async def body():
            return test(*args, **kwargs)
        return asyncio.run(body())
    wrapper.__name__ = test.__name__
    return wrapper


def subscription(*topics: str) -> bytes:
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


RANGE_ON_T = (("range", subscription("t")),)


def request(member_id="", instance=None, protocols=RANGE_ON_T, session_ms=10_000,
            rebalance_ms=30_000, v4=True, client="c") -> JoinRequest:
    return JoinRequest(member_id, instance, client, "127.0.0.1", session_ms, rebalance_ms, "consumer",
                       tuple(protocols), require_known_member_id=v4)


def recording_group(**settings) -> tuple[Group, list]:
    group = Group("g", GroupSettings(**settings))
    seen = []
    group.on_change = lambda g, old, event: seen.append((old, event, g.state))
    return group, seen


def join_new(group: Group, now: int = 0, **kw):
    """A dynamic member's first join: MEMBER_ID_REQUIRED, then the join with its id."""
    with pytest.raises(MemberIdRequired) as info:
        group.join(request(**kw), now)
    return group.join(request(member_id=info.value.member_id, **kw), now)


def stable_group_of(n: int, **settings):
    """A Stable group of ``n`` members that joined one after the other at time 0."""
    group, seen = recording_group(**settings)
    for _ in range(n):
        new = join_new(group, 0)
        for m in [m for m, member in group.members.items() if member.join_waiter is None]:
            group.join(request(member_id=m), 0)
        assert new.done()
        group.sync(group.leader_id, None, group.generation_id, {m: f"a-{m}".encode() for m in group.members}, 0)
    assert group.state is STABLE
    return group, seen


# -- the table -------------------------------------------------------------------------------
def test_table_covers_every_state_and_dead_is_terminal():
    sources = {src for src, _, _ in TRANSITIONS}
    targets = {dst for _, _, dst in TRANSITIONS}
    assert set(states.GroupState) == sources | targets
    assert DEAD not in sources
    assert states.next_state(EMPTY, "join") is PREPARING
    with pytest.raises(states.IllegalTransition):
        states.next_state(STABLE, "leader_synced")


@run
def test_every_change_follows_the_table():
    group, seen = stable_group_of(3)
    group.leave(next(iter(group.members)), None, 1000)
    for m in list(group.members):
        group.leave(m, None, 1000)
    assert group.state is EMPTY
    group.mark_dead()
    assert seen and all(row in TRANSITIONS for row in seen)
    assert {event for _, event, _ in seen} >= {"join", "all_joined", "leader_synced", "leave", "all_left", "delete"}


# -- JoinGroup and SyncGroup ----------------------------------------------------------------------
@run
def test_member_id_required_round_trip():
    group, _ = recording_group()
    with pytest.raises(MemberIdRequired) as info:
        group.join(request(client="app"), 0)
    assert info.value.code == ErrorCode.member_id_required and info.value.member_id.startswith("app-")
    assert group.state is EMPTY and info.value.member_id in group.pending
    fut = group.join(request(member_id=info.value.member_id), 0)
    result = fut.result()
    assert (result.member_id, result.generation_id, result.leader_id) == (info.value.member_id, 1, info.value.member_id)
    assert group.state is COMPLETING and result.protocol_name == "range"


@run
def test_old_join_versions_get_an_id_at_once():
    group, _ = recording_group()
    result = group.join(request(v4=False), 0).result()
    assert result.member_id and result.generation_id == 1


@run
def test_leader_gets_subscriptions_and_followers_wait_for_its_sync():
    group, _ = recording_group()
    first = join_new(group).result()
    group.sync(first.member_id, None, 1, {first.member_id: b"p0-5"}, 0)
    second = join_new(group, 1000)
    assert not second.done() and group.state is PREPARING  # waits for the first member to rejoin
    with pytest.raises(KafkaError) as hb:
        group.heartbeat(first.member_id, None, 1, 1500)
    assert hb.value.code == ErrorCode.rebalance_in_progress
    again = group.join(request(member_id=first.member_id), 2000)
    assert again.done() and second.done() and group.state is COMPLETING
    leader, follower = again.result(), second.result()
    assert leader.generation_id == follower.generation_id == 2
    assert leader.leader_id == follower.leader_id == first.member_id
    assert {m for m, _, _ in leader.members} == {first.member_id, follower.member_id}
    assert follower.members == ()
    waiting = group.sync(follower.member_id, None, 2, {}, 2100)
    assert not waiting.done()
    group.sync(first.member_id, None, 2, {first.member_id: b"p0-2", follower.member_id: b"p3-5"}, 2200)
    assert waiting.result().assignment == b"p3-5" and group.state is STABLE


@run
def test_stale_generation_is_refused():
    group, _ = stable_group_of(1)
    member = next(iter(group.members))
    with pytest.raises(KafkaError) as e:
        group.heartbeat(member, None, 0, 1000)
    assert e.value.code == ErrorCode.illegal_generation
    with pytest.raises(KafkaError) as e:
        group.heartbeat("nobody", None, 1, 1000)
    assert e.value.code == ErrorCode.unknown_member_id


@run
def test_protocol_chosen_by_votes_among_common_ones():
    group, _ = recording_group()
    a = join_new(group, protocols=(("roundrobin", b""), ("range", b""))).result()
    group.sync(a.member_id, None, 1, {}, 0)
    b = join_new(group, protocols=(("range", b""), ("roundrobin", b"")))
    c = join_new(group, protocols=(("range", b""),))
    group.join(request(member_id=a.member_id, protocols=(("roundrobin", b""), ("range", b""))), 0)
    assert b.result().protocol_name == c.result().protocol_name == "range"  # the only common one
    with pytest.raises(KafkaError) as e:
        group.join(request(protocols=(("sticky", b""),), v4=False), 0)
    assert e.value.code == ErrorCode.inconsistent_group_protocol


@run
def test_session_timeout_outside_broker_range():
    group, _ = recording_group(min_session_timeout_ms=6000)
    with pytest.raises(KafkaError) as e:
        group.join(request(session_ms=1000), 0)
    assert e.value.code == ErrorCode.invalid_session_timeout


# -- timers ----------------------------------------------------------------------------------------
@run
def test_member_that_stops_heartbeating_is_evicted_and_group_rebalances():
    group, _ = stable_group_of(2)
    quiet, alive = list(group.members)
    group.heartbeat(alive, None, group.generation_id, 8000)
    group.tick(9000)
    assert set(group.members) == {quiet, alive}
    group.tick(10_500)  # quiet's 10 s session ran out; alive heartbeated at 8 s
    assert set(group.members) == {alive} and group.state is PREPARING
    fut = group.join(request(member_id=alive), 11_000)
    assert fut.result().generation_id == 3 and fut.result().leader_id == alive


@run
def test_members_that_miss_the_rebalance_timeout_are_removed():
    group, _ = stable_group_of(2)
    a, b = list(group.members)
    newcomer = join_new(group, 100_000)
    group.join(request(member_id=a), 101_000)
    for t in (101_000, 109_000, 117_000, 125_000):  # b stays alive but never rejoins
        with pytest.raises(KafkaError):
            group.heartbeat(b, None, group.generation_id, t)
        group.tick(t)
    assert not newcomer.done()
    assert group.next_deadline() <= 130_000
    group.tick(130_000)  # 30 s rebalance timeout from 100 s: b never rejoined
    assert newcomer.done() and b not in group.members and len(group.members) == 2
    assert group.state is COMPLETING


@run
def test_initial_rebalance_delay_waits_for_more_members():
    group, _ = recording_group(initial_rebalance_delay_ms=3000)
    first = join_new(group, 0)
    second = join_new(group, 1000)  # arrives during the delay, which restarts
    assert not first.done()
    group.tick(3500)
    assert not first.done()
    group.tick(4000)
    assert first.done() and second.done() and first.result().generation_id == 1
    assert len(first.result().members) + len(second.result().members) == 2


@run
def test_last_member_leaving_empties_the_group():
    group, _ = stable_group_of(1)
    generation = group.generation_id
    group.leave(next(iter(group.members)), None, 1000)
    assert group.state is EMPTY and group.generation_id == generation + 1 and group.protocol_name is None
    assert group.protocol_type == "consumer"  # kept: ListGroups still shows an empty consumer group


# -- static membership (KIP-345) ------------------------------------------------------------------
@run
def test_static_member_rejoins_without_rebalance_and_old_id_is_fenced():
    group, seen = recording_group()
    a = group.join(request(instance="a"), 0).result()  # static members skip MEMBER_ID_REQUIRED
    b = group.join(request(instance="b"), 0)
    group.join(request(member_id=a.member_id, instance="a"), 0)
    b = b.result()
    group.sync(a.member_id, "a", 2, {a.member_id: b"A", b.member_id: b"B"}, 0)
    generation = group.generation_id
    seen.clear()
    back = group.join(request(instance="b"), 5000).result()  # b restarted: new member id, same instance
    assert back.member_id != b.member_id and back.generation_id == generation
    assert back.leader_id != back.member_id  # a follower: it must not reassign
    assert group.sync(back.member_id, "b", generation, {}, 5000).result().assignment == b"B"
    assert group.state is STABLE and [e for _, e, _ in seen] == ["static_rejoin"]
    with pytest.raises(KafkaError) as e:
        group.heartbeat(b.member_id, "b", generation, 6000)
    assert e.value.code == ErrorCode.fenced_instance_id


@run
def test_static_leader_restart_keeps_old_leader_id_in_answer():
    group, _ = recording_group()
    a = group.join(request(instance="a"), 0).result()
    group.sync(a.member_id, "a", 1, {a.member_id: b"A"}, 0)
    back = group.join(request(instance="a"), 1000).result()
    assert back.leader_id == a.member_id and group.leader_id == back.member_id
    assert group.sync(back.member_id, "a", 1, {}, 1000).result().assignment == b"A"


def test_subscribed_topics_from_consumer_protocol_metadata():
    assert subscribed_topics(subscription("orders", "payments")) == {"orders", "payments"}
    assert subscribed_topics(b"\x00") == set()
