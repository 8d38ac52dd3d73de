"""Consumer groups with kafka-python: sharing partitions, rebalancing, failing, resuming.

Each test is one behaviour a Kafka course teaches about groups, checked with the real
client: partitions are shared inside a group and every group gets every message; a
member that leaves or joins moves partitions without losing committed progress; a
member that dies silently is evicted after its session timeout; range and roundrobin
assign differently; a static member comes back without a rebalance.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter

import pytest

from tests.groups.helpers import KAFKA_PYTHON_GROUP, KafkaPythonMember, create_topic, produce, wait_until

pytestmark = pytest.mark.timeout(60)


def stop_all(members) -> None:
    for m in members:
        m.stop()


def test_three_members_share_six_partitions_and_another_group_gets_everything(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 6)
    members = [KafkaPythonMember(bootstrap, "share", [topic_name]) for _ in range(3)]
    other = KafkaPythonMember(bootstrap, "audit", [topic_name])
    try:
        wait_until(lambda: sorted(len(m.assignment()) for m in members) == [2, 2, 2], 30, "2 partitions each")
        assert set().union(*(m.assignment() for m in members)) == {(topic_name, p) for p in range(6)}
        wait_until(lambda: len(other.assignment()) == 6, 30, "the second group's only member to own all")
        sent = produce(bootstrap, topic_name, 600, 6)
        wait_until(lambda: len(other.values()) == 600, 30, "the second group to read everything")
        assert sorted(other.values()) == sorted(sent)
        wait_until(lambda: sum(len(m.values()) for m in members) >= 600, 30, "the first group to read everything")
        assert sorted(v for m in members for v in m.values()) == sorted(sent)  # each record read once
    finally:
        stop_all([*members, other])


class SteadyProducer(threading.Thread):
    """Keeps records flowing (round-robin over partitions) so rebalances happen mid-stream."""

    def __init__(self, bootstrap: str, topic: str, partitions: int):
        super().__init__(daemon=True)
        from kafka import KafkaProducer
        self.producer, self.topic, self.partitions = KafkaProducer(bootstrap_servers=bootstrap,
                                                                   linger_ms=2), topic, partitions
        self.sent: list[bytes] = []
        self._stop_event = threading.Event()
        self.start()

    def run(self) -> None:
        while not self._stop_event.is_set():
            value = f"r-{len(self.sent)}".encode()
            self.producer.send(self.topic, value, partition=len(self.sent) % self.partitions)
            self.sent.append(value)
            time.sleep(0.002)

    def stop(self) -> list[bytes]:
        self._stop_event.set()
        self.join(10)
        self.producer.flush(30)
        self.producer.close()
        return self.sent


def test_leave_and_join_move_partitions_without_losing_committed_work(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 4)
    producer = SteadyProducer(bootstrap, topic_name, 4)
    config = dict(commit_every=3, max_poll_records=20)  # some work is always uncommitted
    a, b = (KafkaPythonMember(bootstrap, "movers", [topic_name], **config) for _ in range(2))
    c = None
    try:
        wait_until(lambda: len(a.assignment()) == len(b.assignment()) == 2, 30, "2 + 2 partitions")
        wait_until(lambda: len(a.values()) > 100 and len(b.values()) > 100, 30, "both members to make progress")
        a_had = a.assignment()
        a.stop()  # LeaveGroup: b takes over at its next heartbeat, from a's last commit
        wait_until(lambda: len(b.assignment()) == 4, 30, "b to own all 4 partitions")
        c = KafkaPythonMember(bootstrap, "movers", [topic_name], **config)
        wait_until(lambda: len(b.assignment()) == len(c.assignment()) == 2, 30, "b and c to share")
        wait_until(lambda: len(c.values()) > 100, 30, "c to make progress")
        sent = producer.stop()
        members = (a, b, c)
        wait_until(lambda: set(sent) <= {v for m in members for v in m.values()}, 30, "every record (none lost)")
        counts = Counter(v for m in members for v in m.values())
        duplicates = sum(n - 1 for n in counts.values())
        # Only work done but not committed when a partition moved is read again: per
        # member, at most its largest uncommitted backlog, at each of the two rebalances.
        bound = 2 * sum(m.most_uncommitted for m in members)
        assert duplicates <= bound, f"{duplicates} duplicates; at most {bound} were uncommitted"
        assert a_had <= b.assignment() | c.assignment()
    finally:
        producer.stop() if producer.is_alive() else None
        stop_all([m for m in (b, c) if m])


CHILD = textwrap.dedent("""
    import sys
    from kafka import KafkaConsumer
    bootstrap, topic, group, config = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4])
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, **config)
    while True:
        consumer.poll(timeout_ms=200)
        if consumer.assignment():
            print("assigned", len(consumer.assignment()), flush=True)
""")


def test_killed_member_is_evicted_after_session_timeout(bootstrap, topic_name):
    create_topic(bootstrap, topic_name, 4)
    child = subprocess.Popen([sys.executable, "-c", CHILD, bootstrap, topic_name, "crash", repr(KAFKA_PYTHON_GROUP)],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    survivor = None
    try:
        assert child.stdout.readline().startswith("assigned")
        survivor = KafkaPythonMember(bootstrap, "crash", [topic_name])
        wait_until(lambda: len(survivor.assignment()) == 2, 30, "the survivor to get half the partitions")
        child.send_signal(signal.SIGKILL)  # no LeaveGroup: only the session timeout can tell
        killed_at = time.monotonic()
        wait_until(lambda: len(survivor.assignment()) == 4, 30, "the dead member's partitions to move")
        waited = time.monotonic() - killed_at
        assert waited >= 4, f"reassigned after {waited:.1f} s: before session.timeout.ms=6000 could pass"
    finally:
        child.kill()
        child.wait()
        if survivor:
            survivor.stop()


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_range_and_roundrobin_assign_as_documented(bootstrap, strategy):
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
    topics = [f"{strategy}-x", f"{strategy}-y"]
    for t in topics:
        create_topic(bootstrap, t, 3)
    # Member ids start with the client id, and both assignors order members by id.
    members = [KafkaPythonMember(bootstrap, f"assign-{strategy}", topics, client_id=name,
                                 partition_assignment_strategy=[assignor]) for name in ("a", "b")]
    try:
        x, y = topics
        expected = {
            # range: per topic, the first member gets the extra partition
            "range": [{(x, 0), (x, 1), (y, 0), (y, 1)}, {(x, 2), (y, 2)}],
            # roundrobin: all partitions of all topics dealt out one by one
            "roundrobin": [{(x, 0), (x, 2), (y, 1)}, {(x, 1), (y, 0), (y, 2)}],
        }[strategy]
        wait_until(lambda: [m.assignment() for m in members] == expected, 30, f"the {strategy} assignment")
    finally:
        stop_all(members)


STRATEGIES = ["range", "roundrobin", "sticky", "cooperative-sticky"]


def assignor_class(strategy: str):
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    return {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
            "sticky": StickyPartitionAssignor, "cooperative-sticky": CooperativeStickyAssignor}[strategy]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_assignor_shares_partitions_through_a_join(bootstrap, topic_name, strategy):
    create_topic(bootstrap, topic_name, 4)
    config = dict(partition_assignment_strategy=[assignor_class(strategy)])
    a, b = (KafkaPythonMember(bootstrap, f"all-{strategy}", [topic_name], **config) for _ in range(2))
    c = None
    try:
        wait_until(lambda: len(a.assignment()) == len(b.assignment()) == 2, 30, "2 + 2 partitions")
        before = (a.assignment(), b.assignment())
        c = KafkaPythonMember(bootstrap, f"all-{strategy}", [topic_name], **config)
        members = (a, b, c)
        wait_until(lambda: sorted(len(m.assignment()) for m in members) == [1, 1, 2]
                   and set().union(*(m.assignment() for m in members)) == {(topic_name, p) for p in range(4)},
                   30, "a 2/1/1 split of all 4 partitions")
        if "sticky" in strategy:  # the old members keep what they had, minus what c needed
            assert a.assignment() <= before[0] and b.assignment() <= before[1]
    finally:
        stop_all([m for m in (a, b, c) if m])


def test_static_member_restart_keeps_partitions_without_rebalance(bootstrap, cluster, topic_name):
    create_topic(bootstrap, topic_name, 4)
    static = dict(session_timeout_ms=20000)  # long enough that only the restart can matter
    a = KafkaPythonMember(bootstrap, "statics", [topic_name], group_instance_id="a", **static)
    b = KafkaPythonMember(bootstrap, "statics", [topic_name], group_instance_id="b", **static)

    def group() -> tuple[int, str]:
        def read():
            g = cluster.broker().groups.groups["statics"]
            return g.generation_id, str(g.state)
        return cluster.call(read)  # on the broker's event loop, which owns the state

    try:
        wait_until(lambda: len(a.assignment()) == len(b.assignment()) == 2, 30, "2 + 2 partitions")
        (generation, _), b_had = group(), b.assignment()
        b.stop()  # a static member sends no LeaveGroup (KIP-345)
        b = KafkaPythonMember(bootstrap, "statics", [topic_name], group_instance_id="b", **static)
        wait_until(lambda: b.assignment() == b_had, 30, "the restarted member to get its partitions back")
        assert group() == (generation, "Stable"), "no rebalance happened"
        assert len(a.assignment()) == 2
    finally:
        stop_all([a, b])


def test_member_id_required_round_trip(bootstrap, topic_name, caplog):
    create_topic(bootstrap, topic_name, 1)
    caplog.set_level(logging.INFO, logger="kafka.coordinator")
    member = KafkaPythonMember(bootstrap, "newcomer", [topic_name])
    try:
        wait_until(lambda: member.assignment(), 30, "an assignment")
        notes = [r.getMessage() for r in caplog.records if "will retry join-group" in r.getMessage()]
        assert notes and member.consumer._coordinator._generation.member_id in notes[0]
    finally:
        member.stop()
