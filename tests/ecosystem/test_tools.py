"""The stream processor and the mirror against embedded minikafka clusters."""

from __future__ import annotations

from collections import Counter

from confluent_kafka import Producer

from kafka_course.ecosystem import mirror, streams


def test_count_by_key_restores_its_state_from_the_changelog(cluster):
    bootstrap = cluster.bootstrap_servers
    keys = [b"a", b"b", b"a", b"c", b"a", b"b"] * 4
    producer = Producer({"bootstrap.servers": bootstrap})
    for key in keys:
        producer.produce("views", b"1", key)
    producer.flush(10)
    first = streams.CountByKey("app", "views", "counts", bootstrap=bootstrap)
    assert first.restore() == 0 and first.run(max_records=10) == 10
    first.close()
    second = streams.CountByKey("app", "views", "counts", bootstrap=bootstrap)
    assert second.restore() == 10
    assert second.run(max_records=100) == len(keys) - 10
    second.close()
    assert second.counts == dict(Counter(keys))


def test_mirror_copies_records_with_a_prefixed_name_and_only_new_ones_next_time(make_cluster):
    source, target = make_cluster(), make_cluster()
    producer = Producer({"bootstrap.servers": source.bootstrap_servers})
    for i in range(6):
        producer.produce("orders", f"order {i}".encode(), f"k{i % 3}".encode(), headers=[("origin", b"eu")])
    producer.flush(10)
    mm = mirror.Mirror(source.bootstrap_servers, target.bootstrap_servers, source_alias="eu")
    report = mm.sync("orders")
    assert report.target_topic == "eu.orders" and report.copied == 6 and len(report.offset_syncs) == 6
    assert mirror.records(target.bootstrap_servers, "eu.orders") == mirror.records(source.bootstrap_servers, "orders")
    producer.produce("orders", b"order 6", b"k0")
    producer.flush(10)
    assert mm.sync("orders").copied == 1
