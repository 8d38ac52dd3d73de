"""Replication, failover and the ISR, observed with real clients on a 3-broker cluster."""

from __future__ import annotations

import random

import pytest
from confluent_kafka import KafkaError as CKError
from confluent_kafka import Producer

from tests.replication.helpers import AckedProducer, read_partitions, wait_for


def test_replication_factor_is_spread_and_isr_is_full(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", partitions=3, replication_factor=3)
    states = [cluster.partition_state("orders", p) for p in range(3)]
    assert sorted(s["leader"] for s in states) == [1, 2, 3]  # leaders spread over the brokers
    assert all(s["isr"] == s["replicas"] and len(s["replicas"]) == 3 for s in states)


def test_leader_stop_elects_an_isr_member_and_clients_follow(replicated_cluster):
    cluster = replicated_cluster(brokers=3, config={"min.insync.replicas": 2})
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    before = cluster.partition_state("orders")
    with AckedProducer(cluster.bootstrap_servers, "orders", acks="all", **{"enable.idempotence": True}) as p:
        assert wait_for(lambda: p.acked_count > 200)
        cluster.stop_broker(before["leader"])
        after = cluster.partition_state("orders")
        assert after["leader"] != before["leader"] and after["leader_epoch"] > before["leader_epoch"]
        assert before["leader"] not in after["isr"]
        seen = p.acked_count
        assert wait_for(lambda: p.acked_count > seen + 200)  # the producer found the new leader
    got = read_partitions(cluster.bootstrap_servers, "orders", 1)[0]
    assert got == p.acked[0]  # every acknowledged record, once, in order
    cluster.start_broker(before["leader"])
    assert wait_for(lambda: cluster.partition_state("orders")["leader"] == before["leader"])  # preferred leader back


def test_acks_all_refused_below_min_insync_replicas(make_cluster):
    cluster = make_cluster(brokers=3, config={"min.insync.replicas": 2})
    cluster.create_topic("payments", partitions=1, replication_factor=3)
    leader = cluster.partition_state("payments")["leader"]
    for b in [b for b in (1, 2, 3) if b != leader]:
        cluster.stop_broker(b)
    errors = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "retries": 0,
                  "enable.idempotence": False})
    p.produce("payments", b"refused", on_delivery=lambda err, m: errors.append(err))
    p.flush(10)
    assert errors[0] is not None and errors[0].code() == CKError.NOT_ENOUGH_REPLICAS
    ok = []
    p1 = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": 1})
    p1.produce("payments", b"acks=1 still works", on_delivery=lambda err, m: ok.append(err))
    p1.flush(10)
    assert ok == [None]


def test_isr_shrinks_with_a_slow_follower_and_grows_back(replicated_cluster):
    cluster = replicated_cluster(brokers=3, config={"replica.lag.time.max.ms": 1000})
    cluster.create_topic("slow", partitions=1, replication_factor=3)
    leader = cluster.partition_state("slow")["leader"]
    slow = next(b for b in (1, 2, 3) if b != leader)
    cluster.slow_broker(slow, delay_ms=3000)
    with AckedProducer(cluster.bootstrap_servers, "slow", acks=1):
        assert wait_for(lambda: slow not in cluster.partition_state("slow")["isr"], timeout=15)
        cluster.slow_broker(slow, delay_ms=0)
        assert wait_for(lambda: slow in cluster.partition_state("slow")["isr"], timeout=15)


def _unclean_scenario(make_cluster, acks: str) -> tuple[int, int]:
    """Follower down, leader takes writes alone, leader dies, the stale follower leads.

    Returns (acknowledged, acknowledged but lost)."""
    cluster = make_cluster(brokers=2, config={"unclean.leader.election.enable": "true",
                                               "min.insync.replicas": 2})
    cluster.create_topic("ledger", partitions=1, replication_factor=2)
    leader = cluster.partition_state("ledger")["leader"]
    follower = 3 - leader
    acked = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": acks, "retries": 0,
                  "enable.idempotence": False})
    for i in range(50):
        p.produce("ledger", b"before-%d" % i, on_delivery=lambda err, m: err is None and acked.append(m.value()))
    p.flush(10)
    assert wait_for(lambda: cluster.partition_state("ledger")["log_end_offsets"].get(follower) == 50)
    cluster.stop_broker(follower)
    for i in range(50):
        p.produce("ledger", b"alone-%d" % i, on_delivery=lambda err, m: err is None and acked.append(m.value()))
    p.flush(10)
    cluster.crash_broker(leader)
    cluster.start_broker(follower)  # only the stale replica is alive: unclean election
    assert wait_for(lambda: cluster.partition_state("ledger")["leader"] == follower)
    cluster.start_broker(leader)  # the old leader truncates to the new leader's log
    assert wait_for(lambda: len(cluster.partition_state("ledger")["isr"]) == 2)
    got = set(read_partitions(cluster.bootstrap_servers, "ledger", 1)[0])
    return len(acked), len([v for v in acked if v not in got])


def test_unclean_election_loses_acked_writes_with_acks_1(replicated_cluster):
    acked, lost = _unclean_scenario(replicated_cluster, "1")
    assert acked == 100 and lost == 50  # every write the leader took alone is gone


def test_unclean_election_loses_nothing_acked_with_acks_all(replicated_cluster):
    acked, lost = _unclean_scenario(replicated_cluster, "all")
    assert acked == 50 and lost == 0  # writes without a second replica were refused, not lost


def test_no_acknowledged_record_is_lost_across_random_failovers(replicated_cluster):
    """Property: RF=3, min.insync.replicas=2, acks=all, idempotent producer; brokers are
    stopped, crashed and restarted at random (at least 20 leader changes). Every
    acknowledged record is read back exactly once per partition, in acknowledgement order."""
    rng = random.Random(1234)
    cluster = replicated_cluster(brokers=3, config={"min.insync.replicas": 2})
    cluster.create_topic("events", partitions=3, replication_factor=3)
    epochs = lambda: sum(cluster.partition_state("events", p)["leader_epoch"] for p in range(3))  # noqa: E731
    start_epochs = epochs()
    with AckedProducer(cluster.bootstrap_servers, "events", acks="all", **{"enable.idempotence": True,
                                                                         "message.timeout.ms": 60000}) as p:
        steps = 0
        while epochs() - start_epochs < 20 or steps < 12:
            live = cluster.live_brokers
            if len(live) == 3:
                victim = rng.choice(live)
                (cluster.crash_broker if rng.random() < 0.5 else cluster.stop_broker)(victim)
            else:
                cluster.start_broker(next(b for b in (1, 2, 3) if b not in live))
            seen = p.acked_count
            wait_for(lambda seen=seen: p.acked_count > seen + 50, timeout=5)
            steps += 1
            assert steps < 80, "too few leader changes happened"
        for b in (1, 2, 3):
            cluster.start_broker(b)
    assert p.acked_count > 1000
    got = read_partitions(cluster.bootstrap_servers, "events", 3)
    for partition, acked in p.acked.items():
        stored = got[partition]
        assert len(stored) == len(set(stored)), f"partition {partition} holds duplicates"
        positions = [stored.index(v) for v in acked]  # raises if an acknowledged record is missing
        assert positions == sorted(positions), f"partition {partition} reordered acknowledged records"


def test_replication_factor_larger_than_cluster_is_refused(make_cluster):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic
    cluster = make_cluster(brokers=2)
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    with pytest.raises(KafkaException) as info:
        client.create_topics([NewTopic("too-many", 1, 3)])["too-many"].result(10)
    assert info.value.args[0].code() == CKError.INVALID_REPLICATION_FACTOR


def test_isr_shrinking_during_an_acks_all_write_is_not_acknowledged(replicated_cluster):
    """Kafka re-checks min.insync.replicas when an acks=all write completes."""
    cluster = replicated_cluster(brokers=2, config={"min.insync.replicas": 2})
    cluster.create_topic("audit", partitions=1, replication_factor=2)
    state = cluster.partition_state("audit")
    follower = next(b for b in state["replicas"] if b != state["leader"])
    cluster.slow_broker(follower, delay_ms=3000)
    errors = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "retries": 0,
                  "enable.idempotence": False, "linger.ms": 0})
    p.produce("audit", b"in doubt", on_delivery=lambda err, m: errors.append(err))
    leader = state["leader"]

    def on_leader() -> bool:
        p.poll(0)  # serve the producer's callbacks while waiting
        return cluster.partition_state("audit")["log_end_offsets"].get(leader) == 1

    reached = wait_for(on_leader)
    assert reached, "the write never reached the leader"
    assert not errors, "the write was answered before the follower could stop"
    cluster.stop_broker(follower)  # the ISR shrinks to the leader alone while the write waits
    p.flush(10)
    assert errors and errors[0] is not None and errors[0].code() == CKError.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_a_follower_behind_the_leaders_log_start_restarts_its_log_there(replicated_cluster):
    """Records the follower missed were deleted on the leader while it was down: it must
    start its log at the leader's log start offset and rejoin the ISR (the fetcher used
    to die on this path, leaving the broker a follower that never fetched again)."""
    cluster = replicated_cluster(brokers=2)
    cluster.create_topic("ledger", partitions=1, replication_factor=2)
    state = cluster.partition_state("ledger")
    leader, follower = state["leader"], next(b for b in state["replicas"] if b != state["leader"])
    cluster.stop_broker(follower)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "1"})
    for i in range(50):
        producer.produce("ledger", f"r{i}".encode())
    assert producer.flush(30) == 0
    part = cluster.broker(leader).local_replica("ledger", 0)
    cluster.call(part.log.delete_records_before, 40)  # what DeleteRecords does
    cluster.start_broker(follower)
    caught_up = wait_for(lambda: cluster.partition_state("ledger")["isr"] == state["replicas"])
    assert caught_up, "the follower never caught up"
    copy = cluster.broker(follower).local_replica("ledger", 0)
    assert (copy.log_start_offset, copy.log_end_offset) == (40, 50)
