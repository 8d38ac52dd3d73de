"""Lab 05's check fails the settings learners get wrong about broker failures, and passes the solution.

The check judges behaviour on a three-broker cluster: lost acknowledgements, a crashed
leader with slow followers, one broker stopped (writes must go on), two stopped (a lone
leader must refuse acks=all writes). Each wrong answer below fails for its own reason.
"""

from __future__ import annotations

import time

import pytest

from kafka_course.checks import CheckFailed
from kafka_course.labs import broker_failure as lab_check

from .notebook_code import solution

pytestmark = pytest.mark.slow
SECONDS = 1.0  # per step (the notebook uses 1.5)


def settings(**changes):
    """The solution notebook's settings, with ``changes`` to the topic config or the producer."""
    given = solution("05", "TOPIC_SETTINGS", "PRODUCER_SETTINGS", PARTITIONS=3)
    topic, producer = dict(given["TOPIC_SETTINGS"]), dict(given["PRODUCER_SETTINGS"])
    topic["config"] = {**topic["config"], **changes.pop("config", {})}
    topic.update({k: v for k, v in changes.items() if k == "replication_factor"})
    producer.update({k.replace("_", "."): v for k, v in changes.items() if k != "replication_factor"})
    return topic, producer


def fails(three_brokers, capsys, topic, producer, *expected: str) -> str:
    started = time.monotonic()
    with pytest.raises(CheckFailed) as failure:
        lab_check.check(topic, producer, bootstrap=three_brokers, seconds=SECONDS)
    printed = capsys.readouterr().out
    for words in expected:
        assert words in str(failure.value), f"{words!r} not in the failure: {failure.value}"
    print(f"lab 05 check: {time.monotonic() - started:.1f} s")
    return printed


def test_the_reference_solution_passes(three_brokers, capsys):
    started = time.monotonic()
    lab_check.check(*settings(), bootstrap=three_brokers, seconds=SECONDS)
    printed = capsys.readouterr().out
    assert "All 5 checks passed" in printed and "the lone leader accepted none of the" in printed
    print(f"lab 05 check: {time.monotonic() - started:.1f} s")


def test_min_insync_replicas_1_lets_a_lone_leader_accept_writes(three_brokers, capsys):
    printed = fails(three_brokers, capsys, *settings(config={"min.insync.replicas": 1}),
                    "the leader was the only in-sync replica, and it acknowledged",
                    "min.insync.replicas is 1: the leader alone counts as enough")
    assert "4 of 5 checks passed, 1 failed." in printed


def test_min_insync_replicas_3_stops_writes_when_one_broker_is_down(three_brokers, capsys):
    printed = fails(three_brokers, capsys, *settings(config={"min.insync.replicas": 3}),
                    "were not acknowledged before it came back: one stopped broker stopped writes",
                    "the topic asks for 3 in-sync replicas")
    assert "4 of 5 checks passed, 1 failed." in printed


def test_acks_1_without_idempotence_loses_and_repeats_records(three_brokers, capsys):
    fails(three_brokers, capsys, *settings(acks="1", enable_idempotence=False),
          "acknowledged records are gone", "wait for all in-sync replicas (acks)",
          "records are stored more than once", "an idempotent producer",
          "Your producer uses acks=1")


def test_a_single_copy_of_each_partition_fails_both_phases(three_brokers, capsys):
    fails(three_brokers, capsys, *settings(replication_factor=1, config={"min.insync.replicas": 1}),
          "had no leader: its only copy", "Keep more copies of each partition",
          "Each partition has a single copy")


def test_unclean_leader_election_loses_what_the_out_of_sync_replica_never_had(three_brokers, capsys):
    """The failure script leaves an out-of-sync replica as the only candidate: with unclean election
    it leads, and the acknowledged records it never copied are gone."""
    printed = fails(three_brokers, capsys, *settings(config={"unclean.leader.election.enable": "true"}),
                    "acknowledged records are gone", "an unclean leader election",
                    "Leave unclean.leader.election.enable false")
    assert "wait for all in-sync replicas (acks)" not in printed


@pytest.mark.parametrize("unclean_allowed, blamed, not_blamed", [
    (False, "wait for all in-sync replicas (acks)", "an unclean leader election"),
    (True, "an unclean leader election", "wait for all in-sync replicas (acks)"),
])
def test_a_lost_record_is_blamed_on_an_unclean_election_only_when_the_topic_allows_one(
        three_brokers, unclean_allowed, blamed, not_blamed):
    """A replica that left the ISR below min.insync.replicas may lead again as an eligible leader
    replica (KIP-966): a clean election. Records acknowledged by the leader alone and missing
    afterwards are then the producer's acks, not an unclean election (a full run once blamed it)."""
    from kafka_course.handle import PartitionState
    from kafka_course.labs.failure_script import Window
    from kafka_course.clients import new_topic
    topic = lab_check._create(new_topic, settings()[0], three_brokers)
    trial = lab_check.Trial(topic)
    trial.acked[0] = [b"record-0000001"]  # acknowledged, never stored
    window = Window("out of sync", [1, 2], 0.0, partitions=[PartitionState(0, 3, (1, 2, 3), (3,))])
    report = lab_check.Report("lab 05")
    lab_check._judge(report, trial, three_brokers, window, unclean_allowed)
    said = " ".join(report.failed)
    assert "1 acknowledged records are gone (e.g. record-0000001)" in said
    assert blamed in said and not_blamed not in said
