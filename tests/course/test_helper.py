"""The course helper (kafka_course) against the embedded minikafka, with real clients.

These tests protect what the notebooks rely on: ``bootstrap()`` picks the right cluster,
the cluster handle answers the same questions on every back end and refuses
minikafka-only powers elsewhere with a clear sentence, the client helpers round-trip
records, the views draw from live state, group members share partitions, and the
checks fail, as AssertionErrors, with the expectation (each lab's check is tested in tests/labs).
"""

from __future__ import annotations


import re

import matplotlib
import pytest

matplotlib.use("Agg")

import kafka_course as course
from kafka_course import connection, handle
from kafka_course.checks import CheckFailed, Report, check
from kafka_course.partitioner import partition_for


@pytest.fixture
def embedded(monkeypatch):
    """The process-wide embedded cluster, whatever the environment says."""
    monkeypatch.delenv(connection.ENV_VAR, raising=False)
    return course.bootstrap()


# -- bootstrap() and the cluster handle -------------------------------------------------
def test_bootstrap_starts_one_embedded_cluster_per_process(embedded):
    assert course.bootstrap() == embedded
    assert course.cluster().is_minikafka


def test_bootstrap_prefers_an_address_given_then_the_environment(monkeypatch, embedded):
    monkeypatch.setattr(connection, "_current", embedded)  # restored after the test
    monkeypatch.setattr(connection, "unreachable", lambda servers, from_environment: None)  # no such hosts here
    monkeypatch.setenv(connection.ENV_VAR, "kafka.example:9092")
    assert course.bootstrap() == "kafka.example:9092"
    assert course.bootstrap("other:9093") == "other:9093"
    assert not course.cluster().is_minikafka


def test_a_dead_bootstrap_address_stops_at_bootstrap_with_one_sentence(monkeypatch, embedded):
    monkeypatch.setattr(connection, "_current", embedded)  # restored after the test
    monkeypatch.setattr(connection, "_refused", None)
    monkeypatch.setenv(connection.ENV_VAR, "127.0.0.1:1")
    with pytest.raises(connection.KafkaUnreachable) as refused:
        course.bootstrap()
    said = str(refused.value)
    assert said.startswith("No Kafka broker answers at 127.0.0.1:1 (127.0.0.1:1 refused the connection")
    assert "unset KAFKA_BOOTSTRAP_SERVERS" in said and "\n" not in said
    assert refused.value._render_traceback_() == [f"\x1b[31mKafkaUnreachable\x1b[0m: {said}"]  # IPython: one line
    with pytest.raises(connection.KafkaUnreachable, match=re.escape("No Kafka broker answers at 127.0.0.1:1")):
        course.new_topic("later")  # a later helper says the same, never the embedded cluster instead
    with pytest.raises(connection.KafkaUnreachable, match="give None to use the embedded minikafka"):
        course.bootstrap("127.0.0.1:1")
    monkeypatch.delenv(connection.ENV_VAR)
    assert course.bootstrap() == embedded and connection.current_bootstrap() == embedded


def test_a_cluster_outside_this_process_refuses_minikafka_powers(capsys, monkeypatch, embedded):
    outside = handle.ClusterHandle("127.0.0.1:1", None)
    assert not outside.is_minikafka
    with pytest.raises(course.MinikafkaOnly, match="only on the embedded minikafka"):
        outside.segments("any-topic")
    with pytest.raises(NotImplementedError):
        outside.slow_broker(1, 100)
    monkeypatch.setattr(connection, "_current", "127.0.0.1:1")
    assert course.requires_minikafka("Reading segments") is False
    assert "only the embedded minikafka has" in capsys.readouterr().out
    assert course.requires_real_kafka() is True


def test_stopping_a_real_broker_without_docker_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker command on this PATH
    with pytest.raises(RuntimeError, match="docker"):
        handle.ClusterHandle("127.0.0.1:1", None).stop_broker(1)
    assert handle.COMPOSE_SERVICES[2] == "kafka-2"


def test_topology_and_log_sizes_come_from_the_cluster(embedded):
    topic = course.new_topic("topo", partitions=2)
    course.produce_demo(topic, 20, key=lambda i: f"k{i}")
    handle = course.cluster()
    parts = handle.topology(topic)
    assert [p.partition for p in parts] == [0, 1]
    assert all(p.leader == 1 and p.isr == (1,) for p in parts)
    assert sum(handle.log_sizes(topic).values()) > 0
    assert handle.segments(topic, 0)[0]["base_offset"] == 0
    assert list(handle.brokers()) == [1]


def test_a_crashed_broker_comes_back_with_its_records(embedded):
    topic = course.new_topic("crash", partitions=1)
    course.produce_demo(topic, 10)
    handle = course.cluster()
    handle.crash_broker(1)
    handle.start_broker(1)
    course.wait_until(lambda: len(course.consume_all(topic, timeout=3)) == 10, timeout=20, what="the records")


# -- client helpers -------------------------------------------------------------------------
def test_new_topic_names_are_unique(embedded):
    assert course.new_topic("same") != course.new_topic("same")


def test_produce_and_consume_round_trip_keys_values_and_headers(embedded):
    topic = course.new_topic("rt", partitions=3)
    sent = course.produce_demo(topic, 50, key=lambda i: f"user-{i % 5}", value=lambda i: {"n": i},
                               headers={"source": "test"})
    got = course.consume_all(topic)
    assert sorted((r.partition, r.offset) for r in got) == sorted((r.partition, r.offset) for r in sent)
    assert all(r.partition == partition_for(r.key, 3) for r in got), "keys must be placed the Java way"
    assert got[0].headers == [("source", b"test")]
    assert sum(o.records for o in course.offsets(topic)) == 50


# -- views ------------------------------------------------------------------------------------
def test_offsets_view_draws_one_bar_per_partition(embedded):
    topic = course.new_topic("view", partitions=3)
    course.produce_demo(topic, 30)
    fig = course.OffsetsView(topic).figure()
    assert len(fig.axes[0].patches) == 6  # deleted + stored bar per partition
    labels = sorted(t.get_text() for t in fig.axes[0].texts)
    ends = sorted(f"0..{o.high_watermark - 1}" for o in course.offsets(topic) if o.records)
    assert labels[:len(ends)] == ends, "a bar's label names its first and last offset, as the notebooks say them"


def test_assignment_timeline_records_owners(embedded):
    topic = course.new_topic("tl", partitions=2)
    timeline = course.AssignmentTimeline(topic)
    timeline.record("a joins", {"a": [0, 1]})
    timeline.record("b joins", {"a": [0], "b": [1]})
    assert "p0:a  p1:b" in timeline.table()
    timeline.figure()
    timeline.explore()  # no notebook here: prints the table


def test_group_members_share_partitions_and_lag_drains(embedded):
    topic = course.new_topic("grp", partitions=2)
    course.produce_demo(topic, 40)
    lag = course.LagTimeline("g-helper", topic)
    members = [course.GroupMember(n, topic, "g-helper", auto_commit_interval_ms=100) for n in ("a", "b")]
    try:
        assert course.wait_for_members(members)
        assert sorted(p for m in members for p in m.partitions) == [0, 1]
        course.wait_until(lambda: sum(len(m.handled) for m in members) == 40, what="the records")
        course.wait_until(lambda: sum(lag.record().values()) == 0, what="lag to reach zero")
    finally:
        for m in members:
            m.leave()
    assert lag.figure() is not None


# -- preflight ---------------------------------------------------------------------------------
def test_preflight_finds_the_embedded_broker_reachable(embedded):
    finding = course.preflight.advertised_listeners(embedded)
    assert finding.ok, finding


def test_preflight_explains_an_unreachable_advertised_listener():
    finding = course.preflight.check_advertised({1: ("kafka-does-not-resolve.invalid", 9092)})
    assert not finding.ok
    assert "advertised.listeners" in finding.detail and "does not resolve" in finding.detail


# -- checks ---------------------------------------------------------------------------------
def test_check_failures_are_assertion_errors_with_the_expectation(capsys):
    check(True, "it works", "")
    with pytest.raises(AssertionError, match="should be 42"):
        check(False, "", "the answer should be 42")
    assert "✔ it works" in capsys.readouterr().out


def test_report_collects_every_failure_and_learner_exceptions(capsys):
    with pytest.raises(CheckFailed) as failure, Report("demo") as report:
        report.check(True, "first passed", "")
        ok, _ = report.attempt(lambda: 1 / 0, what="your function")
        report.check(False, "", "second expected")
    assert not ok
    assert "ZeroDivisionError" in str(failure.value) and "second expected" in str(failure.value)
    assert "1 of 3 checks passed" in capsys.readouterr().out


def test_a_cluster_that_hides_its_log_sizes_gets_a_sentence_not_zero(make_cluster):
    """A Kafka user without Describe on the cluster gets DescribeLogDirs refused
    (CLUSTER_AUTHORIZATION_FAILED): sizes are unknown, not 0 bytes, which notebook 03 divided by."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                       ResourcePatternType, ResourceType)
    hidden = make_cluster(in_memory=True, config={
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true"})
    outside = handle.ClusterHandle(hidden.bootstrap_servers, None)  # as a notebook sees a cluster it did not start
    topic = course.new_topic("sizes", partitions=1, bootstrap=hidden.bootstrap_servers)
    course.produce_demo(topic, 5, bootstrap=hidden.bootstrap_servers)
    assert outside.reveals_log_sizes(topic)
    deny = AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                      AclOperation.DESCRIBE, AclPermissionType.DENY)
    acl_admin = AdminClient({"bootstrap.servers": hidden.bootstrap_servers})
    for future in acl_admin.create_acls([deny]).values():
        future.result(10)
    assert not outside.reveals_log_sizes(topic)
    with pytest.raises(course.LogSizesHidden, match="does not show how big the logs of") as hidden_error:
        outside.log_sizes(topic)
    assert len(hidden_error.value._render_traceback_()) == 1
    with pytest.raises(course.LogSizesHidden):
        outside.replica_sizes(topic, 0)


def test_a_cluster_kept_in_memory_shows_its_log_sizes(make_cluster):
    """`minikafka serve --in-memory` answers DescribeLogDirs with one virtual directory per broker."""
    memory = make_cluster(in_memory=True)
    outside = handle.ClusterHandle(memory.bootstrap_servers, None)
    topic = course.new_topic("sizes", partitions=1, bootstrap=memory.bootstrap_servers)
    course.produce_demo(topic, 5, bootstrap=memory.bootstrap_servers)
    assert outside.log_sizes(topic)[0] > 0 and outside.replica_sizes(topic, 0)[1] > 0


def test_a_cluster_that_shows_its_log_sizes_over_describe_log_dirs(cluster):
    outside = handle.ClusterHandle(cluster.bootstrap_servers, None)
    topic = course.new_topic("sizes", partitions=2, bootstrap=cluster.bootstrap_servers)
    course.produce_demo(topic, 20, bootstrap=cluster.bootstrap_servers)
    assert outside.reveals_log_sizes(topic) and sum(outside.log_sizes(topic).values()) > 0
