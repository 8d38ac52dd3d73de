"""Share sessions (ShareFetch's epochs) and share group membership (ShareGroupHeartbeat),
as plain objects: the error codes of KIP-932 for each wrong epoch or unknown member."""

from __future__ import annotations

import pytest

from minikafka.clock import ManualClock
from minikafka.errors import ErrorCode, KafkaError
from minikafka.share.coordinator import ShareGroupCoordinator
from minikafka.share.group import Heartbeat, ShareGroup
from minikafka.share.sessions import MAX_EPOCH, ShareSessionCache, next_epoch
from minikafka.share.state_topic import MemoryStateStore

TOPICS = {"orders": 3, "audit": 1}


def code_of(fn, *args) -> ErrorCode:
    with pytest.raises(KafkaError) as e:
        fn(*args)
    return e.value.code


# -- share sessions -------------------------------------------------------------------------------
def test_a_session_opens_at_epoch_zero_and_expects_each_next_epoch_in_turn():
    cache = ShareSessionCache()
    session, old = cache.open("g", "m", {("orders", 0)})
    assert (session.epoch, old) == (1, None)
    assert cache.existing("g", "m", 1) is session
    cache.advance(session, {("orders", 1)}, {("orders", 0)})
    assert (session.epoch, session.partitions) == (2, {("orders", 1)})
    assert code_of(cache.existing, "g", "m", 1) == ErrorCode.invalid_share_session_epoch
    assert code_of(cache.existing, "g", "m", 3) == ErrorCode.invalid_share_session_epoch
    assert cache.existing("g", "m", -1) is session, "the final epoch closes whatever the count"


def test_a_missing_session_and_a_full_cache_have_their_own_errors():
    cache = ShareSessionCache(max_sessions=1)
    assert code_of(cache.existing, "g", "m", 1) == ErrorCode.share_session_not_found
    first, _ = cache.open("g", "m", set())
    again, old = cache.open("g", "m", set())
    assert old is first and again is not first, "reopening replaces the member's session"
    assert code_of(cache.open, "g", "other", set()) == ErrorCode.share_session_limit_reached
    cache.close(again)
    assert code_of(cache.existing, "g", "m", 1) == ErrorCode.share_session_not_found


def test_the_session_epoch_wraps_to_one():
    assert next_epoch(MAX_EPOCH) == 1 and next_epoch(1) == 2


# -- share group membership -------------------------------------------------------------------------
def beat(group: ShareGroup, member: str, epoch: int, topics=None, now: int = 0, max_size: int = 200):
    return group.heartbeat(Heartbeat(member, epoch, topics), TOPICS, 45_000, now, max_size)


def test_every_member_gets_every_partition_of_its_topics():
    group = ShareGroup("g")
    a, news = beat(group, "a", 0, ["orders"])
    assert news and a.member_epoch == 1 and a.assignment == {"orders": (0, 1, 2)}
    b, _ = beat(group, "b", 0, ["orders", "audit", "missing"])
    assert b.member_epoch == 2 and b.assignment == {"orders": (0, 1, 2), "audit": (0,)}
    a, news = beat(group, "a", 1)
    assert news and a.member_epoch == 2 and a.assignment == {"orders": (0, 1, 2)}, "a follows the group epoch"
    a, news = beat(group, "a", 2)
    assert not news, "nothing changed: no assignment in the answer"


def test_a_stale_epoch_is_fenced_and_an_unknown_member_must_rejoin():
    group = ShareGroup("g")
    beat(group, "a", 0, ["orders"])
    beat(group, "b", 0, ["orders"])
    beat(group, "a", 1)
    assert code_of(beat, group, "a", 1) == ErrorCode.fenced_member_epoch
    assert code_of(beat, group, "a", 7) == ErrorCode.fenced_member_epoch
    assert code_of(beat, group, "ghost", 2) == ErrorCode.unknown_member_id
    assert code_of(beat, group, "c", 0) == ErrorCode.invalid_request, "the first heartbeat names its topics"


def test_leaving_and_timing_out_remove_members_and_bump_the_group_epoch():
    group = ShareGroup("g")
    beat(group, "a", 0, ["orders"], now=0)
    beat(group, "b", 0, ["orders"], now=10_000)
    left, _ = beat(group, "b", -1)
    assert left.member_epoch == -1 and group.group_epoch == 3
    assert code_of(beat, group, "b", -1) == ErrorCode.unknown_member_id
    assert group.next_deadline() == 45_000
    assert group.expire(44_999) == [] and group.expire(45_000) == ["a"]
    assert group.state == "Empty" and group.group_epoch == 4


def test_a_topic_that_grows_gives_a_new_assignment():
    group = ShareGroup("g")
    beat(group, "a", 0, ["orders"])
    member, news = group.heartbeat(Heartbeat("a", 1), {"orders": 5}, 45_000, 0, 200)
    assert news and member.member_epoch == 2 and member.assignment == {"orders": (0, 1, 2, 3, 4)}


def test_a_full_group_refuses_one_more_member():
    group = ShareGroup("g")
    beat(group, "a", 0, ["orders"], max_size=1)
    assert code_of(beat, group, "b", 0, ["orders"], 0, 1) == ErrorCode.group_max_size_reached


# -- the coordinator ----------------------------------------------------------------------------------
class Metadata:
    def __init__(self):
        from minikafka.metadata import TopicInfo
        self.topics = {"orders": TopicInfo("orders", "00000000-0000-0000-0000-000000000001", [None] * 3)}
        self.group_configs: dict = {}


def coordinator(store=None, leader=1, classic=(), clock=None):
    from minikafka.config import BrokerConfig
    return ShareGroupCoordinator(1, BrokerConfig(), Metadata(), store or MemoryStateStore(), lambda g: leader,
                                 lambda g: "consumer" if g in classic else None, clock=clock or ManualClock())


def test_a_group_id_of_a_consumer_group_is_not_a_share_group():
    c = coordinator(classic={"classic"})
    assert code_of(c.heartbeat, "classic", Heartbeat("m", 0, ("orders",))) == ErrorCode.group_id_not_found
    assert code_of(c.heartbeat, "nobody", Heartbeat("m", 3)) == ErrorCode.group_id_not_found


def test_only_the_groups_coordinator_answers():
    assert code_of(coordinator(leader=2).heartbeat, "g", Heartbeat("m", 0, ("orders",))) == ErrorCode.not_coordinator
    assert code_of(coordinator(leader=-1).heartbeat, "g",
                   Heartbeat("m", 0, ("orders",))) == ErrorCode.coordinator_not_available


@pytest.mark.parametrize("group_id, hb", [("", Heartbeat("m", 0, ("orders",))), ("g", Heartbeat("", 0, ("orders",))),
                                          ("g", Heartbeat("m", -2))])
def test_malformed_heartbeats_are_invalid_requests(group_id, hb):
    assert code_of(coordinator().heartbeat, group_id, hb) == ErrorCode.invalid_request


def test_groups_and_their_epochs_are_recorded_and_read_back():
    store = MemoryStateStore()
    first = coordinator(store)
    member, news, interval = first.heartbeat("g", Heartbeat("m", 0, ("orders",)))
    assert (member.member_epoch, news, interval) == (1, True, 5000)
    again = coordinator(store)
    assert again.is_share_group("g") and again.describe("g").group_epoch == 1
    assert code_of(again.describe, "other") == ErrorCode.group_id_not_found
    assert code_of(again.describe, "") == ErrorCode.invalid_group_id
    assert [g.group_id for g in again.list_groups()] == ["g"]
    assert code_of(again.heartbeat, "g", Heartbeat("m", 1)) == ErrorCode.unknown_member_id, \
        "members are not kept across a restart: they rejoin"
