"""The course helpers for Kafka 4's features, with real clients against minikafka: what the
cluster offers (ApiVersions and feature levels), the join measured on the consumer group
protocol (KIP-848, notebook 04) and share groups used as a queue (KIP-932, notebooks 01, 13)."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import kafka_course as course
from kafka_course import connection, features, rebalance

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def embedded(monkeypatch):
    monkeypatch.delenv(connection.ENV_VAR, raising=False)
    return course.bootstrap()


def test_minikafka_offers_the_consumer_protocol_and_share_groups(embedded):
    found = features.features(embedded)
    assert found.speaks(features.CONSUMER_GROUP_HEARTBEAT) and found.speaks(features.SHARE_GROUP_HEARTBEAT, 1)
    assert course.requires_consumer_protocol() and course.requires_share_groups() and course.requires_transaction_v2()


def test_a_feature_the_cluster_finalized_below_the_level_needed_is_off():
    """Kafka 4.1 advertises ShareGroupHeartbeat v1 but ships ``share.version`` at 0 (off)."""
    apis = {features.SHARE_GROUP_HEARTBEAT: (1, 1), features.CONSUMER_GROUP_HEARTBEAT: (0, 1)}
    kafka_41 = features.Features(apis, {"share.version": (0, 1), "group.version": (0, 1)}, {"group.version": 1})
    assert kafka_41.enabled("group.version") and not kafka_41.enabled("share.version")
    switched_on = features.Features(apis, {"share.version": (0, 1)}, {"share.version": 1})
    assert switched_on.enabled("share.version")
    kafka_40 = features.Features({features.SHARE_GROUP_HEARTBEAT: (0, 0)})  # early access: v0 only
    assert not kafka_40.speaks(features.SHARE_GROUP_HEARTBEAT, 1)


def test_a_cluster_without_the_features_makes_cells_skip_with_a_sentence(capsys, monkeypatch, embedded):
    capsys.readouterr()  # the embedded broker's start-up line, where this test runs first in its worker
    monkeypatch.setattr(connection, "_current", "127.0.0.1:1")  # nothing answers there
    assert course.requires_share_groups("The demo") is False
    assert course.requires_consumer_protocol("The demo") is False
    assert course.requires_transaction_v2("The demo") is False
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 3 and all("so it is skipped" in line for line in printed), printed


def test_a_join_on_the_consumer_protocol_stops_only_the_partitions_that_move(make_cluster):
    cluster = make_cluster(config={"group.consumer.heartbeat.interval.ms": 500})
    bootstrap = cluster.bootstrap_servers
    assert rebalance.broker_heartbeat_ms(bootstrap) == 500
    result = rebalance.join_round("consumer (KIP-848)", 500, bootstrap=bootstrap)
    assert result.stopped == {"m1": 1, "m2": 1}, "each member already there gave up one partition of three"
    assert 0 < result.newcomer_first < 10 and result.arrivals["newcomer"]
    final = {name: changes[-1][1] for name, changes in result.owned.items()}
    assert sorted(p for parts in final.values() for p in parts) == list(range(rebalance.PARTITIONS))
    assert "consumer (KIP-848)" in rebalance.table([result])


def test_share_workers_take_turns_on_one_partition_and_accept_what_they_took(embedded):
    from kafka_course import queues
    topic = course.new_topic("jobs", partitions=1)
    group = f"workers-{topic}"
    queues.read_from_start(group)
    with queues.ShareWorkers(topic, group, ["w1", "w2", "w3"], delay=0.01) as workers:
        assert workers.wait_for_members()
        queues.produce_each(topic, [f"job-{i}" for i in range(12)])
        assert workers.wait_for(12)
    assert not workers.errors
    assert all(workers.got.values()), f"every worker took records from the one partition: {workers.got}"
    assert sorted(o for got in workers.got.values() for o, _, _ in got) == list(range(12))
    later = queues.share_consumer(group, topic, share_acknowledgement_mode="explicit")
    try:
        assert queues.poll_one(later, timeout=2) is None, "the workers accepted everything, the last ones too"
    finally:
        later.close()
