"""Share groups with confluent-kafka's ``ShareConsumer`` (KIP-932): several consumers read ONE
partition and each record goes to exactly one of them; a released record, or one whose
acquisition lock ran out, goes to another with its delivery count increased; reject and
the delivery count limit archive a record; the state survives a broker restart."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import AcknowledgeType

from tests.share.helpers import (LOCK_MS, SHARE_CONFIG, earliest, explicit_consumer, poll_one, poll_together,
                                 produce_batches, share_consumer, wait_until)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def share_cluster(make_cluster):
    return make_cluster(config=SHARE_CONFIG)


def committed(consumer) -> dict:
    """commit_sync's answer as {partition: error name or None}."""
    return {tp.partition: (e.args[0].name() if e is not None else None) for tp, e in consumer.commit_sync(10).items()}


def test_three_consumers_take_turns_on_one_partition(share_cluster, topic_name):
    """While one consumer holds a record, the next record goes to the next consumer: no
    partition is owned, no consumer waits for another (no head-of-line blocking)."""
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "turns")
    produce_batches(bootstrap, topic_name, 9)
    consumers = [explicit_consumer(bootstrap, "turns", topic_name) for _ in range(3)]
    try:
        got: list[list[int]] = [[], [], []]
        for _ in range(3):
            held = [poll_one(c) for c in consumers]  # each holds one record while the others fetch
            for i, (consumer, message) in enumerate(zip(consumers, held)):
                got[i].append(message.offset())
                consumer.acknowledge(message)
        assert sorted(o for g in got for o in g) == list(range(9)) and all(len(g) == 3 for g in got), got
        for consumer in consumers:
            assert committed(consumer) == {0: None}
    finally:
        for consumer in consumers:
            consumer.close()
    state = share_cluster.share_partition_state("turns", topic_name)
    assert (state["start_offset"], state["end_offset"], state["records"]) == (9, 9, {})


def test_consumers_polling_at_once_get_each_record_exactly_once(share_cluster, topic_name):
    bootstrap = share_cluster.bootstrap_servers
    share_cluster.create_topic(topic_name, partitions=1)
    consumers = [share_consumer(bootstrap, "workers", topic_name, **{"max.poll.records": 1}) for _ in range(3)]
    pollers = poll_together(share_cluster, topic_name, consumers, 30, timeout=20)
    offsets = sorted(o for got in pollers.got for o, _ in got)
    assert offsets == list(range(30)), "every record delivered exactly once"
    assert {count for got in pollers.got for _, count in got} == {1}
    assert not pollers.errors
    state = share_cluster.share_partition_state("workers", topic_name)
    assert (state["start_offset"], state["records"]) == (30, {}), "all accepted: SPSO moved to the end"


def test_a_released_record_goes_to_another_consumer(share_cluster, topic_name):
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "release")
    produce_batches(bootstrap, topic_name, 1)
    a, b = explicit_consumer(bootstrap, "release", topic_name), explicit_consumer(bootstrap, "release", topic_name)
    try:
        first = poll_one(a)
        assert (first.offset(), first.delivery_count()) == (0, 1)
        a.acknowledge(first, AcknowledgeType.RELEASE)
        assert committed(a) == {0: None}
        again = poll_one(b)
        assert (again.offset(), again.delivery_count(), again.value()) == (0, 2, b"r0")
        b.acknowledge(again)
        assert committed(b) == {0: None}
        assert share_cluster.share_partition_state("release", topic_name)["start_offset"] == 1
    finally:
        a.close()
        b.close()


def test_a_record_not_acknowledged_in_time_is_redelivered(share_cluster, topic_name):
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "slow")
    produce_batches(bootstrap, topic_name, 1)
    a, b = explicit_consumer(bootstrap, "slow", topic_name), explicit_consumer(bootstrap, "slow", topic_name)
    try:
        held = poll_one(a)
        taken_at = time.monotonic()
        state = share_cluster.share_partition_state("slow", topic_name)
        assert state["records"][0]["state"] == "Acquired" and state["records"][0]["delivery_count"] == 1
        again = poll_one(b, timeout=LOCK_MS / 1000 + 5)
        assert (again.offset(), again.delivery_count()) == (0, 2)
        assert time.monotonic() - taken_at >= LOCK_MS / 1000 - 0.3, "not before the lock ran out"
        a.acknowledge(held)  # too late: b holds it now
        assert committed(a) == {0: "INVALID_RECORD_STATE"}
        b.acknowledge(again)
        assert committed(b) == {0: None}
    finally:
        a.close()
        b.close()


def test_a_rejected_record_is_archived_and_never_delivered_again(share_cluster, topic_name):
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "picky")
    produce_batches(bootstrap, topic_name, 2)
    a = explicit_consumer(bootstrap, "picky", topic_name)
    try:
        bad = poll_one(a)
        a.acknowledge(bad, AcknowledgeType.REJECT)
        nxt = poll_one(a)
        assert (bad.offset(), nxt.offset(), nxt.delivery_count()) == (0, 1, 1)
        a.acknowledge(nxt)
        assert committed(a) == {0: None}
        state = share_cluster.share_partition_state("picky", topic_name)
        assert (state["start_offset"], state["end_offset"], state["records"]) == (2, 2, {})
    finally:
        a.close()


def test_the_delivery_count_limit_archives_a_record(make_cluster, topic_name):
    cluster = make_cluster(config={**SHARE_CONFIG, "group.share.delivery.count.limit": 2})
    bootstrap = cluster.bootstrap_servers
    earliest(bootstrap, "poison")
    produce_batches(bootstrap, topic_name, 2)
    a = explicit_consumer(bootstrap, "poison", topic_name)
    try:
        seen = []
        for _ in range(3):
            message = poll_one(a)
            seen.append((message.offset(), message.delivery_count()))
            a.acknowledge(message, AcknowledgeType.RELEASE if message.offset() == 0 else AcknowledgeType.ACCEPT)
        assert seen == [(0, 1), (0, 2), (1, 1)], "offset 0 was archived after its second delivery"
        assert committed(a) == {0: None}
        assert cluster.share_partition_state("poison", topic_name)["start_offset"] == 2
    finally:
        a.close()


def test_share_state_survives_a_broker_restart(share_cluster, topic_name):
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "durable")
    produce_batches(bootstrap, topic_name, 4)
    a = explicit_consumer(bootstrap, "durable", topic_name)
    for kind in (AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE):
        a.acknowledge(poll_one(a), kind)
    assert committed(a) == {0: None}
    a.close()
    before = share_cluster.share_partition_state("durable", topic_name)
    share_cluster.restart()
    after = share_cluster.share_partition_state("durable", topic_name)
    assert after == before and (after["start_offset"], after["end_offset"]) == (2, 3)
    assert after["records"] == {2: {"state": "Available", "delivery_count": 1, "member_id": None}}
    b = explicit_consumer(share_cluster.bootstrap_servers, "durable", topic_name)
    try:
        seen = []
        for _ in range(2):
            message = poll_one(b)
            seen.append((message.offset(), message.delivery_count()))
            b.acknowledge(message)
        assert seen == [(2, 2), (3, 1)], "accepted records stay accepted; the released one keeps its count"
        assert committed(b) == {0: None}
    finally:
        b.close()


def test_a_consumer_that_closes_gives_back_what_it_holds_at_once(share_cluster, topic_name):
    """Closing sends the last share request (epoch -1): the broker releases the records
    still held, so another member gets them now, not when the lock would run out."""
    bootstrap = share_cluster.bootstrap_servers
    earliest(bootstrap, "leaver")
    produce_batches(bootstrap, topic_name, 1)
    a, b = explicit_consumer(bootstrap, "leaver", topic_name), explicit_consumer(bootstrap, "leaver", topic_name)
    try:
        poll_one(a)
        a.close()
        closed_at = time.monotonic()
        again = poll_one(b)
        assert (again.offset(), again.delivery_count()) == (0, 2)
        assert time.monotonic() - closed_at < LOCK_MS / 1000, "released by the close, before the lock ran out"
    finally:
        b.close()


def test_one_group_id_cannot_be_both_a_consumer_group_and_a_share_group(share_cluster, topic_name):
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
    bootstrap = share_cluster.bootstrap_servers
    produce_batches(bootstrap, topic_name, 1)
    share = share_consumer(bootstrap, "queue", topic_name)
    classic = Consumer({"bootstrap.servers": bootstrap, "group.id": "queue", "log_level": 0})
    try:
        wait_until(lambda: share.poll(0.2) is not None and share_cluster.call(
            lambda: share_cluster.broker().share_groups.is_share_group("queue")), 10, "the share group")
        classic.subscribe([topic_name])
        errors = wait_until(lambda: [m.error().code() for m in [classic.poll(0.2)] if m is not None and m.error()],
                            10, "JoinGroup's answer")
        assert errors == [KafkaError.INCONSISTENT_GROUP_PROTOCOL]
    finally:
        classic.close()
        share.close()
    committer = Consumer({"bootstrap.servers": bootstrap, "group.id": "queue-classic"})
    committer.commit(offsets=[TopicPartition(topic_name, 0, 0)], asynchronous=False)  # a consumer group now
    committer.close()
    other = share_consumer(bootstrap, "queue-classic", topic_name)
    try:
        with pytest.raises(KafkaException) as e:
            wait_until(lambda: other.poll(0.2) and False, 10, "ShareGroupHeartbeat's answer")
        assert e.value.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND and e.value.args[0].fatal()
    finally:
        other.close()


def test_a_new_partition_leader_takes_over_the_share_state(make_cluster, topic_name):
    """The share state is replicated with ``__share_group_state``: when the partition's leader
    stops, the new leader reads it back and consumers carry on where the group was."""
    cluster = make_cluster(brokers=3, config=SHARE_CONFIG)
    cluster.create_topic(topic_name, partitions=1, replication_factor=3)
    earliest(cluster.bootstrap_servers, "ha")
    produce_batches(cluster.bootstrap_servers, topic_name, 4)
    a = explicit_consumer(cluster.bootstrap_servers, "ha", topic_name)
    for kind in (AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE):
        a.acknowledge(poll_one(a), kind)
    assert committed(a) == {0: None}
    a.close()
    before = cluster.share_partition_state("ha", topic_name)
    old_leader = cluster.partition_state(topic_name)["leader"]
    cluster.stop_broker(old_leader)
    assert cluster.partition_state(topic_name)["leader"] != old_leader
    assert cluster.share_partition_state("ha", topic_name) == before
    b = explicit_consumer(cluster.bootstrap_servers, "ha", topic_name)
    try:
        seen = []
        for _ in range(2):
            message = poll_one(b, timeout=20)
            seen.append((message.offset(), message.delivery_count()))
            b.acknowledge(message)
        assert seen == [(2, 2), (3, 1)]
        assert committed(b) == {0: None}
    finally:
        b.close()


def test_a_new_share_group_starts_at_the_end_of_the_log_by_default(share_cluster, topic_name):
    """``share.auto.offset.reset`` is ``latest`` unless the group says ``earliest``."""
    bootstrap = share_cluster.bootstrap_servers
    produce_batches(bootstrap, topic_name, 3)
    consumer = explicit_consumer(bootstrap, "late", topic_name)
    try:
        wait_until(lambda: consumer.poll(0.2) is not None and share_cluster.share_partition_state("late", topic_name),
                   10, "the group's first fetch")
        assert share_cluster.share_partition_state("late", topic_name)["start_offset"] == 3
        produce_batches(bootstrap, topic_name, 1, start=3)
        message = poll_one(consumer)
        assert (message.offset(), message.value()) == (3, b"r3")
        consumer.acknowledge(message)
    finally:
        consumer.close()
