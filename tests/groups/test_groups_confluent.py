"""Consumer groups with confluent-kafka (librdkafka): eager and cooperative rebalances.

With the eager protocol every rebalance takes all partitions away and hands them out
again. With ``cooperative-sticky`` (KIP-429) a member that keeps a partition never
stops consuming it: the rebalance revokes only the partitions that move, in a second
round. The broker does nothing special for either; both are client-side protocols on
top of the same JoinGroup/SyncGroup barrier, which is what these tests check.
"""

from __future__ import annotations

import pytest

from tests.groups.helpers import ConfluentMember, create_topic, produce, wait_until

pytestmark = pytest.mark.timeout(60)


def test_cooperative_sticky_rebalances_incrementally(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 4)
    config = {"partition.assignment.strategy": "cooperative-sticky"}
    a = ConfluentMember(bootstrap, "coop", [topic_name], **config)
    b = None
    try:
        wait_until(lambda: len(a.assignment()) == 4, 30, "a to own all 4 partitions")
        b = ConfluentMember(bootstrap, "coop", [topic_name], **config)
        wait_until(lambda: len(a.assignment()) == len(b.assignment()) == 2, 30, "2 + 2 partitions")
        kept = a.assignment()
        revoked = set().union(*(parts for kind, parts in a.events if kind == "revoke"))
        assert len(revoked) == 2 and not revoked & kept, "only the partitions that moved were revoked"
        assert revoked == b.assignment()
        assert [kind for kind, _ in b.events if kind == "assign"] and not any(k == "revoke" for k, _ in b.events)
        b.stop()  # b leaves: a gets b's two partitions back without giving up its own
        wait_until(lambda: len(a.assignment()) == 4, 30, "a to own all 4 partitions again")
        assert sum(len(parts) for kind, parts in a.events if kind == "revoke") == 2
        assert a.events[-1] == ("assign", revoked), "only the returning partitions were added"
    finally:
        for m in (a, b):
            if m and m.is_alive():
                m.stop()


def test_eager_rebalance_revokes_everything(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 4)
    a = ConfluentMember(bootstrap, "eager", [topic_name], **{"partition.assignment.strategy": "range"})
    b = None
    try:
        wait_until(lambda: len(a.assignment()) == 4, 30, "a to own all 4 partitions")
        b = ConfluentMember(bootstrap, "eager", [topic_name], **{"partition.assignment.strategy": "range"})
        wait_until(lambda: len(a.assignment()) == len(b.assignment()) == 2, 30, "2 + 2 partitions")
        assert ("revoke", {(topic_name, p) for p in range(4)}) in a.events
    finally:
        for m in (a, b):
            if m:
                m.stop()


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_range_and_roundrobin_assign_as_documented(bootstrap, strategy):
    topics = [f"c-{strategy}-x", f"c-{strategy}-y"]
    for t in topics:
        create_topic(bootstrap, t, 3)
    members = [ConfluentMember(bootstrap, f"c-assign-{strategy}", topics, **{
        "client.id": name, "partition.assignment.strategy": strategy}) for name in ("a", "b")]
    x, y = topics
    expected = {
        "range": [{(x, 0), (x, 1), (y, 0), (y, 1)}, {(x, 2), (y, 2)}],
        "roundrobin": [{(x, 0), (x, 2), (y, 1)}, {(x, 1), (y, 0), (y, 2)}],
    }[strategy]
    try:
        wait_until(lambda: [m.assignment() for m in members] == expected, 30, f"the {strategy} assignment")
    finally:
        for m in members:
            m.stop()


def test_three_members_share_and_commits_resume(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 6)
    sent = produce(bootstrap, topic_name, 300, 6)
    members = [ConfluentMember(bootstrap, "c-share", [topic_name]) for _ in range(3)]
    try:
        wait_until(lambda: sorted(len(m.assignment()) for m in members) == [2, 2, 2], 30, "2 partitions each")
        wait_until(lambda: sum(len(m.received) for m in members) == 300, 30, "every record")
        assert sorted(v for m in members for v in m.received) == sorted(sent)
    finally:
        for m in members:
            m.stop()  # close() commits the auto-committed positions
    more = produce(bootstrap, topic_name, 60, 6, prefix="later")
    late = ConfluentMember(bootstrap, "c-share", [topic_name])
    try:
        wait_until(lambda: len(late.received) >= 60, 30, "the records produced after the commit")
        assert sorted(late.received) == sorted(more), "a restarted member resumes at the committed offsets"
    finally:
        late.stop()
