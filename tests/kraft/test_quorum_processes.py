"""Three controller processes over TCP: elections, failover, rejoining (KIP-595)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft.records import LEADER_CHANGE_MESSAGE, REGISTER_BROKER

from .quorum import Quorum, wait_until

# Kafka's defaults: a follower stands after controller.quorum.fetch.timeout.ms (2 s) without the
# leader, the election itself is bounded by election.timeout.ms (1 s, randomised to 2 s) and the
# backoff (at most 1 s) of a lost round. Two lost rounds still fit in 10 s.
FAILOVER_S = 10.0


@pytest.fixture
def quorum(tmp_path):
    q = Quorum(tmp_path).start()
    yield q
    q.stop()


def settled(quorum: Quorum, among: list[int] | None = None) -> tuple[int, int]:
    return wait_until("one leader every controller agrees on", lambda: quorum.leader(among), timeout=FAILOVER_S)


def test_three_controllers_elect_one_leader_and_every_one_says_so(quorum):
    leader, epoch = settled(quorum)
    answers = {n: quorum.describe(n) for n in quorum.ports}
    assert {(a.leader_id, a.leader_epoch) for a in answers.values()} == {(leader, epoch)}
    for n, a in answers.items():  # followers send DescribeQuorum to the leader, as Kafka's do
        assert a.error_code == (ErrorCode.none if n == leader else ErrorCode.not_leader_or_follower)
    described = wait_until("every voter caught up", lambda: quorum.caught_up(leader))
    assert sorted(v.replica_id for v in described.current_voters) == [1, 2, 3]
    assert described.high_watermark >= 1  # the leader's LeaderChangeMessage is committed
    now_ms = time.time() * 1000
    assert all(now_ms - 5000 < v.last_caught_up_timestamp <= now_ms + 1000 for v in described.current_voters)
    assert [(node.node_id, node.listeners[0].port) for node in quorum.describe(leader, whole=True).nodes] == list(
        quorum.ports.items()
    )


def test_kill_9_the_leader_elects_a_new_one_and_keeps_every_committed_record(quorum):
    leader, epoch = settled(quorum)
    registered = quorum.register(leader, broker_id=101)
    assert registered.error_code == ErrorCode.none  # answered once committed: on a majority of logs
    quorum.kill(leader)
    started = time.monotonic()
    others = quorum.alive()
    new_leader, new_epoch = settled(quorum, others)
    took = time.monotonic() - started
    assert new_leader != leader and new_epoch > epoch and took < FAILOVER_S
    for n in others:
        wait_until(
            f"controller {n} has the registration",
            lambda n=n: any(r.type == REGISTER_BROKER and r.data["brokerId"] == 101 for r in quorum.records(n)),
        )
    quorum.start(leader)  # the old leader comes back as a follower of the new epoch
    wait_until("the old leader follows", lambda: quorum.leader() == (new_leader, new_epoch))
    assert any(r.type == REGISTER_BROKER for r in quorum.records(leader))


def test_sigstop_the_leader_then_sigcont_it_follows_and_truncates_what_was_not_committed(quorum):
    leader, epoch = settled(quorum)
    followers = [n for n in quorum.ports if n != leader]
    wait_until(
        "the followers caught up", lambda: all(v.log_end_offset >= 1 for v in quorum.describe(leader).current_voters)
    )
    for n in followers:  # cut the leader off: what it appends now cannot commit
        quorum.signal(n, signal.SIGSTOP)
    answer = quorum.register(leader, broker_id=202)
    assert answer.error_code == ErrorCode.request_timed_out
    assert any(r.type == REGISTER_BROKER and r.data["brokerId"] == 202 for r in quorum.records(leader))
    quorum.signal(leader, signal.SIGSTOP)
    for n in followers:
        quorum.signal(n, signal.SIGCONT)
    new_leader, new_epoch = settled(quorum, followers)
    assert new_leader != leader and new_epoch > epoch
    quorum.signal(leader, signal.SIGCONT)
    assert wait_until("the old leader follows the new epoch", lambda: quorum.leader()) == (new_leader, new_epoch)
    wait_until(
        "the uncommitted registration is gone from the old leader's log",
        lambda: (
            not any(r.type == REGISTER_BROKER for r in quorum.records(leader))
            and len(quorum.records(leader)) == len(quorum.records(new_leader))
        ),
    )
    assert quorum.records(leader) == quorum.records(new_leader)
    assert [r.epoch for r in quorum.records(leader) if r.type == LEADER_CHANGE_MESSAGE][-1] == new_epoch


def test_a_restarted_controller_keeps_its_epoch_and_vote_and_rejoins(quorum):
    leader, epoch = settled(quorum)
    follower = next(n for n in quorum.ports if n != leader)
    quorum.terminate(follower)
    state = json.loads((quorum.log_dir(follower) / "__cluster_metadata-0" / "quorum-state").read_text())
    assert (state["leaderId"], state["leaderEpoch"]) == (leader, epoch)
    assert state["currentVoters"] == [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]
    quorum.start(follower)
    wait_until("the restarted controller rejoins", lambda: quorum.leader() == (leader, epoch))
    wait_until("it catches up", lambda: quorum.caught_up(leader))


def test_a_graceful_leader_shutdown_hands_over_at_once(quorum):
    leader, epoch = settled(quorum)
    wait_until(
        "the followers know the leader",
        lambda: all(v.last_fetch_timestamp > 0 for v in quorum.describe(leader).current_voters),
    )
    quorum.terminate(leader)  # EndQuorumEpoch: the preferred successor stands without waiting out the fetch timeout
    started = time.monotonic()  # the process is gone: without the handover the others would wait 2 s or more
    new_leader, new_epoch = settled(quorum, quorum.alive())
    assert new_leader != leader and new_epoch > epoch and time.monotonic() - started < 1.5
