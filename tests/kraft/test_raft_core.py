"""The Raft core without sockets (KIP-595): elections, the high watermark, divergence, safety."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minikafka.errors import ErrorCode
from minikafka.kraft.config import BadVoters, parse_voters
from minikafka.kraft.messages import FetchRequest, VoteRequest
from minikafka.kraft.raft import CANDIDATE, FOLLOWER, LEADER, RESIGNED, VOTED

from .sim import Sim


def test_three_nodes_elect_one_leader_that_commits_its_leader_change_record():
    sim = Sim(seed=1)
    sim.run_until(lambda: sim.leader() is not None and sim.leader().high_watermark == 1)
    leader = sim.leader()
    assert sorted(n.state for n in sim.nodes.values()) == [FOLLOWER, FOLLOWER, LEADER]
    assert {n.leader_id for n in sim.nodes.values()} == {leader.node_id}
    assert leader.log.end_offset == 1 and leader.log.last_epoch == leader.epoch


def test_the_high_watermark_is_what_a_majority_has_fetched():
    sim = Sim(seed=2)
    sim.run_until(lambda: sim.leader() is not None and sim.leader().high_watermark == 1)
    leader = sim.leader()
    sim.append(leader.node_id)
    assert leader.high_watermark == 1  # on the leader only: not committed
    follower = next(n for n in sim.nodes if n != leader.node_id)
    answer = leader.handle_request(FetchRequest(follower, leader.epoch, 2, leader.epoch), sim.now)
    assert answer.error == ErrorCode.none and leader.high_watermark == 2  # leader + one follower = 2 of 3


def test_a_vote_is_granted_once_per_epoch_even_across_a_restart():
    sim = Sim(seed=3)
    node = sim.nodes[1]
    assert node.handle_request(VoteRequest(2, 5, -1, 0), 0).vote_granted
    assert node.state == VOTED and node.voted_id == 2
    sim.restart(1)
    assert (sim.nodes[1].epoch, sim.nodes[1].voted_id, sim.nodes[1].state) == (5, 2, VOTED)
    assert not sim.nodes[1].handle_request(VoteRequest(3, 5, -1, 0), 0).vote_granted
    assert sim.nodes[1].handle_request(VoteRequest(2, 5, -1, 0), 0).vote_granted  # the same candidate again


def test_a_candidate_with_a_shorter_log_gets_no_vote():
    sim = Sim(seed=4)
    sim.run_until(lambda: sim.leader() is not None and all(n.log.end_offset == 1 for n in sim.nodes.values()))
    voter = next(n for n in sim.nodes.values() if n.state == FOLLOWER)
    answer = voter.handle_request(VoteRequest(3, voter.epoch + 1, -1, 0), sim.now)
    assert not answer.vote_granted and voter.epoch == answer.leader_epoch
    stale = voter.handle_request(VoteRequest(3, voter.epoch - 1, 9, 9), sim.now)
    assert stale.error == ErrorCode.fenced_leader_epoch


def test_an_old_leader_truncates_what_it_could_not_commit():
    sim = Sim(seed=5)
    sim.run_until(lambda: sim.leader() is not None and all(n.log.end_offset == 1 for n in sim.nodes.values()))
    old = sim.leader()
    sim.append(old.node_id)  # never sent anywhere: the old leader is cut off from here on
    sim.append(old.node_id)
    assert old.log.end_offset == 3
    others = [n for n in sim.nodes if n != old.node_id]
    for _ in range(400):  # the others elect a new leader among themselves; the old one hears nothing
        sim.in_flight = [m for m in sim.in_flight if old.node_id not in (m[1], m[2])]
        while sim.in_flight:
            sim.deliver(0)
            sim.in_flight = [m for m in sim.in_flight if old.node_id not in (m[1], m[2])]
        if any(sim.nodes[n].state == LEADER for n in others):
            break
        sim.advance(10)
    new = sim.leader()
    assert new.node_id in others and new.epoch > old.epoch
    sim.run_until(lambda: old.state == FOLLOWER and old.log.batches() == new.log.batches())
    assert old.log.end_offset == 2 and old.log.last_epoch == new.epoch  # offsets 1-2 of the old epoch are gone


def test_a_leader_that_resigns_hands_over_before_the_fetch_timeout():
    sim = Sim(seed=6)
    sim.run_until(lambda: sim.leader() is not None and sim.leader().high_watermark == 1)
    old = sim.leader()
    old.resign(sim.now)
    assert old.state == RESIGNED
    started = sim.now
    sim.run_until(lambda: sim.leader() is not None and sim.leader() is not old)
    assert sim.now - started < sim.config.fetch_timeout_ms


def test_a_candidate_that_hears_of_nothing_backs_off_then_stands_again():
    sim = Sim(size=3, seed=7)
    node = sim.nodes[1]
    sim.advance(2 * sim.config.election_timeout_ms + 1)
    epoch = node.epoch
    assert node.state == CANDIDATE
    sim.in_flight.clear()  # every vote request lost
    for _ in range(500):
        sim.in_flight.clear()
        sim.advance(10)
        if node.epoch > epoch:
            break
    assert node.epoch > epoch  # it stood again, in a new epoch


def test_voters_parse_as_kafka_writes_them():
    assert parse_voters("1@127.0.0.1:9093, 2@localhost:9094") == {1: ("127.0.0.1", 9093), 2: ("localhost", 9094)}
    for bad in ("", "1@host", "x@h:1", "1@h:1,1@h:2"):
        with pytest.raises(BadVoters):
            parse_voters(bad)


def chaos(sim: Sim, steps: int, drop: float, restart: float, rng) -> None:
    """Deliver in-flight messages in random order, drop some, let time pass, append, restart nodes."""
    for _ in range(steps):
        roll = rng.random()
        if sim.in_flight and roll < 0.6:
            sim.deliver(rng.randrange(len(sim.in_flight)))
        elif sim.in_flight and roll < 0.6 + drop:
            sim.drop(rng.randrange(len(sim.in_flight)))
        elif roll < 0.9:
            sim.advance(rng.choice([1, 5, 20, 100, 400]))
        elif roll < 0.9 + restart:
            sim.restart(rng.choice(sim.ids))
        else:
            sim.append(rng.choice(sim.ids))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.sampled_from([3, 5]),
    seed=st.integers(0, 2**32),
    drop=st.sampled_from([0.0, 0.1, 0.3]),
    restart=st.sampled_from([0.0, 0.01, 0.05]),
)
def test_no_two_leaders_in_one_epoch_and_no_committed_record_lost_in_any_message_order(size, seed, drop, restart):
    """Election safety and leader completeness, whatever is delivered, dropped, reordered or restarted
    (``Sim.after`` checks both after every step). The run must also make progress: leaders are elected."""
    import random

    sim = Sim(size=size, seed=seed)
    chaos(sim, 2000, drop, restart, random.Random(seed))
    assert sim.leaders, "no leader was ever elected: the run tested nothing"


def test_a_new_leader_counts_nothing_committed_until_its_own_first_record_is_on_a_majority():
    """Raft's rule (KIP-595 keeps it): records of an older epoch commit only with the new leader's own."""
    from minikafka.kraft.leader import LeaderState

    leader = LeaderState(1, epoch=3, voters={1, 2, 3}, epoch_start_offset=5, now=0)
    leader.update_local(6, 0)  # offsets 0-4 from older epochs, 5 is the new LeaderChangeMessage
    leader.update_replica(2, 5, 6, 0)  # voter 2 has the old records, not the new one
    assert not leader.advance_high_watermark() and leader.high_watermark == -1
    leader.update_replica(2, 6, 6, 0)
    assert leader.advance_high_watermark() and leader.high_watermark == 6
