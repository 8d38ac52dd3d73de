"""The Jepsen-style history checker: it catches what it must on doctored histories, and
finds nothing wrong after random broker stops, crashes and restarts under acks=all
idempotent producers on the embedded 3-broker Cluster."""

from __future__ import annotations

import pytest

from bench.faults import ClientLinkNemesis, ClusterNemesis, proxied_brokers, run
from minikafka.netfault import History, check


def clean() -> tuple[History, dict[int, list[tuple[int, bytes]]]]:
    history = History()
    for i in range(4):
        history.add("p0", b"a%d" % i, partition=0, offset=i)
    history.add("p1", b"b0", partition=1, offset=0)
    history.add("p1", b"b1", partition=1, offset=None, acked=False)  # failed: may be stored or not
    stored = {0: [(i, b"a%d" % i) for i in range(4)], 1: [(0, b"b0"), (1, b"b1")]}
    return history, stored


def test_a_clean_history_passes_and_counts_the_indeterminate():
    history, stored = clean()
    result = check(history, stored, {0: {1: stored[0], 2: stored[0]}})
    assert result.ok, result
    assert result.figures() == {
        "writes": 6,
        "acknowledged": 5,
        "failed": 1,
        "indeterminate_stored": 1,
        "lost": 0,
        "duplicated": 0,
        "wrong_offset": 0,
        "reordered": 0,
        "diverged": 0,
    }


def test_a_lost_acknowledged_record_is_caught():
    history, stored = clean()
    stored[0] = [r for r in stored[0] if r[1] != b"a2"]
    result = check(history, stored)
    assert not result.ok and [a.value for a in result.lost] == [b"a2"]
    assert result.wrong_offset == [] and result.duplicated == {}


def test_a_duplicate_is_caught():
    history, stored = clean()
    stored[0].append((4, b"a1"))  # a retried batch written twice
    result = check(history, stored)
    assert not result.ok and result.duplicated == {b"a1": [(0, 1), (0, 4)]}


def test_a_record_in_another_partition_is_lost_there():
    history, stored = clean()
    stored[1].append((2, b"a0"))
    stored[0] = stored[0][1:]
    result = check(history, stored)
    assert [a.value for a in result.lost] == [b"a0"]


def test_reordering_and_a_moved_offset_are_caught():
    history, stored = clean()
    stored[0][1], stored[0][2] = (1, b"a2"), (2, b"a1")
    result = check(history, stored)
    assert not result.ok and len(result.reordered) == 1 and "p0 partition 0" in result.reordered[0]
    assert sorted(a.value for a, _ in result.wrong_offset) == [b"a1", b"a2"]


def test_diverging_replicas_are_caught():
    history, stored = clean()
    other = [*stored[0][:2], (2, b"zz"), stored[0][3]]
    result = check(history, stored, {0: {1: stored[0], 2: other}, 1: {1: stored[1]}})
    assert not result.ok and result.diverged == [
        "partition 0: broker 2 differs from broker 1 at record 2 (4 against 4 records below the high watermark)"
    ]


@pytest.mark.slow  # about 25 s: 16 s of writes under faults, then the read-back
def test_nothing_acknowledged_is_lost_across_broker_faults_and_cut_links(make_cluster):
    """The producers reach the brokers only through fault proxies; brokers are stopped,
    crashed and restarted, and the producers' link to one broker is now and then cut."""
    with proxied_brokers(3, seed=31) as (listeners, network):
        cluster = make_cluster(brokers=3, config={"min.insync.replicas": 2, **listeners})
        nemesis = ClientLinkNemesis(ClusterNemesis(cluster), network)
        result, figures = run(cluster, seconds=16, seed=31, interval=(0.6, 1.4), nemesis=nemesis)
        proxied = sum(status["accepted"] for name, status in network.status().items() if name.startswith("client->"))
    assert figures["settled"] and figures["unanswered"] == 0 and figures["producer_fatal_errors"] == [], figures
    assert figures["faults"] >= 8 and figures["failovers"] >= 2 and proxied > 3, figures
    assert result.acknowledged > 1000, figures
    assert result.ok, (figures, result.lost[:3], result.duplicated, result.reordered[:3], result.diverged)
