"""Retention deletes whole old segments and moves the log start offset; compaction
keeps the newest value per key and drops tombstones, within seconds when configured so."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

FAST = {"log.retention.check.interval.ms": "200"}


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def create(cluster, topic) -> None:
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    client.create_topics([topic])[topic.topic].result(10)


def produce(bootstrap, topic, items):
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    for k, v in items:
        p.produce(topic, v, k)
        p.flush(10)


def read_all(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "r", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    while True:
        m = c.poll(5)
        if m is None or m.error():
            break
        out.append((m.key(), m.value(), m.offset()))
    c.close()
    return out


def test_time_retention_moves_log_start_offset(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    create(cluster, NewTopic(
        topic_name, 1, 1, config={"retention.ms": "1000", "segment.ms": "300"}))
    produce(cluster.bootstrap_servers, topic_name, [(b"k", b"old-%d" % i) for i in range(20)])
    assert wait_for(lambda: cluster.partition_offsets(topic_name)[0]["log_start_offset"] == 20)
    produce(cluster.bootstrap_servers, topic_name, [(b"k", b"new")])
    assert [v for _, v, _ in read_all(cluster.bootstrap_servers, topic_name)] == [b"new"]


def test_size_retention_keeps_the_newest_bytes(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    create(cluster, NewTopic(
        topic_name, 1, 1, config={"retention.bytes": "3000", "segment.bytes": "1000"}))
    produce(cluster.bootstrap_servers, topic_name, [(None, b"x" * 200) for _ in range(60)])
    assert wait_for(lambda: cluster.partition_offsets(topic_name)[0]["log_start_offset"] > 30)
    assert cluster.partition_offsets(topic_name)[0]["log_end_offset"] == 60


def test_compaction_keeps_last_value_per_key_and_drops_tombstones(make_cluster, topic_name):
    cluster = make_cluster(config=FAST)
    create(cluster, NewTopic(
        topic_name, 1, 1, config={"cleanup.policy": "compact", "segment.ms": "200", "delete.retention.ms": "0",
                                  "min.cleanable.dirty.ratio": "0.01"}))
    items = [(f"acct-{i % 5}".encode(), f"balance-{i}".encode()) for i in range(50)]
    items.append((b"acct-0", None))  # tombstone: delete acct-0
    produce(cluster.bootstrap_servers, topic_name, items)
    cluster.roll_segments(topic_name)  # the cleaner never touches the active segment: close it now
    produce(cluster.bootstrap_servers, topic_name, [(b"acct-9", b"balance-new")])

    def compacted():
        return {k for k, _, _ in read_all(cluster.bootstrap_servers, topic_name)} == {
            b"acct-1", b"acct-2", b"acct-3", b"acct-4", b"acct-9"}
    assert wait_for(compacted, timeout=20)
    rows = read_all(cluster.bootstrap_servers, topic_name)
    latest = {k: v for k, v, _ in rows}
    assert latest[b"acct-1"] == b"balance-46" and latest[b"acct-4"] == b"balance-49"
    offsets = [o for _, _, o in rows]
    assert offsets == sorted(offsets) and offsets[-1] == 51  # offsets unchanged, never reordered
