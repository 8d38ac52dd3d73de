"""The mirror against embedded minikafka clusters."""

from __future__ import annotations


from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_course.ecosystem import mirror


def test_mirror_renames_topics_and_copies_only_what_is_new(make_cluster):
    source, target = make_cluster(), make_cluster()
    producer = Producer({"bootstrap.servers": source.bootstrap_servers})
    for i in range(6):
        producer.produce("orders", f"order {i}".encode(), f"k{i % 3}".encode(), headers=[("origin", b"eu")])
    producer.flush(10)
    mm = mirror.MirrorMaker(source.bootstrap_servers, target.bootstrap_servers, source_alias="eu")
    report = mm.mirror("orders")
    assert report.target_topic == "eu.orders" and report.copied == 6
    assert mirror.records(target.bootstrap_servers, "eu.orders") == mirror.records(source.bootstrap_servers, "orders")
    producer.produce("orders", b"order 6", b"k0")
    producer.flush(10)
    assert mm.mirror("orders").copied == 1


def test_offset_syncs_and_checkpoints_translate_a_groups_position_across_clusters(make_cluster):
    """Transaction markers take offsets at the source that the copy does not have: the offsets drift."""
    source, target = make_cluster(), make_cluster()
    producer = Producer({"bootstrap.servers": source.bootstrap_servers, "transactional.id": "shop"})
    producer.init_transactions(10)
    for batch in range(3):  # source offsets 0-2, marker 3, 4-6, marker 7, 8-10, marker 11
        producer.begin_transaction()
        for i in range(3):
            producer.produce("orders", f"order {batch * 3 + i}".encode(), partition=0)
        producer.commit_transaction(10)
    mm = mirror.MirrorMaker(source.bootstrap_servers, target.bootstrap_servers, source_alias="primary",
                            target_alias="backup")
    report = mm.mirror("orders")
    assert report.copied == 9 and report.offsets[(0, 5)] == 4
    syncs = mm.offset_syncs("orders")
    assert [(s.upstream, s.downstream) for s in syncs] == [(0, 0), (4, 3), (8, 6)]  # one per drift
    assert mm.offset_syncs_topic == "mm2-offset-syncs.backup.internal"
    assert mirror.translate(syncs, 0, 8) == 6  # exactly a synced offset
    assert mirror.translate(syncs, 0, 12) == 7  # past it: one after the sync (conservative; the end is 9)

    consumer = Consumer({"bootstrap.servers": source.bootstrap_servers, "group.id": "billing",
                         "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition("orders", 0, 5)], asynchronous=False)  # next to read: "order 4"
    consumer.close()
    [checkpoint] = mm.checkpoint("billing")
    assert (checkpoint.topic, checkpoint.upstream, checkpoint.downstream) == ("primary.orders", 5, 4)
    resume = mirror.translate_offsets(target.bootstrap_servers, "primary", "billing")
    assert resume == {("primary.orders", 0): 4}
    copy = {offset: value for _, offset, _, value in mirror.records(target.bootstrap_servers, "primary.orders")}
    original = {offset: value for _, offset, _, value in mirror.records(source.bootstrap_servers, "orders")}
    assert copy[resume[("primary.orders", 0)]] == original[5] == b"order 4"
