"""Eligible leader replicas (KIP-966), on by default on a new Kafka 4.1+ cluster: while the ISR is
smaller than min.insync.replicas the high watermark stands still, so an acks=1 write to a leader
left alone is accepted but invisible; the replicas that left the ISR meanwhile stay electable
(the ELR, and the last known ELR while they are down), and Kafka elects from the ISR, then the ELR.
With eligible.leader.replicas.version=0 the broker behaves as Kafka before 4.1."""

from __future__ import annotations

from confluent_kafka import Producer

from tests.replication.helpers import read_partitions, wait_for


def lone_leader(make_cluster, elr: int):
    cluster = make_cluster(brokers=3, config={"min.insync.replicas": 2, "eligible.leader.replicas.version": elr})
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    p.produce("orders", b"replicated")
    assert p.flush(10) == 0
    leader = cluster.partition_state("orders")["leader"]
    followers = [b for b in (1, 2, 3) if b != leader]
    for b in followers:
        cluster.stop_broker(b)
    alone = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "1"})
    delivered = []
    alone.produce("orders", b"leader alone", on_delivery=lambda err, m: delivered.append(err))
    alone.flush(10)
    assert delivered == [None]  # acks=1: the leader took it
    return cluster, leader, followers


def elr_of(admin, topic: str) -> tuple[list[int], list[int], list[int]]:
    p = admin.describe_topic_partitions([topic])["topics"][0]["partitions"][0]
    return p["isr_nodes"], p["eligible_leader_replicas"] or [], p["last_known_elr"] or []


def test_an_acks_1_write_to_a_lone_leader_is_invisible_until_the_isr_is_big_enough(make_cluster, kafka_admin):
    cluster, leader, (_first, second) = lone_leader(make_cluster, elr=1)
    assert read_partitions(cluster.bootstrap_servers, "orders", 1, timeout=5)[0] == [b"replicated"]
    assert cluster.partition_state("orders")["high_watermark"] == 1
    admin = kafka_admin(cluster)
    assert elr_of(admin, "orders") == ([leader], [], [second])  # the second to leave left the ISR below min ISR
    cluster.start_broker(second)
    assert wait_for(lambda: cluster.partition_state("orders")["high_watermark"] == 2)
    assert read_partitions(cluster.bootstrap_servers, "orders", 1)[0] == [b"replicated", b"leader alone"]
    assert elr_of(admin, "orders") == ([leader, second] if leader < second else [second, leader], [], [])


def test_an_eligible_leader_replica_leads_when_the_isr_is_gone(make_cluster):
    cluster, leader, (_first, second) = lone_leader(make_cluster, elr=1)
    cluster.start_broker(second)  # back, not caught up yet: eligible, and the ISR grows once it fetches
    cluster.crash_broker(leader)
    assert wait_for(lambda: cluster.partition_state("orders")["leader"] == second)
    assert read_partitions(cluster.bootstrap_servers, "orders", 1)[0][:1] == [b"replicated"]


def test_without_elr_the_lone_leaders_write_is_readable_at_once(make_cluster):
    cluster, _, _ = lone_leader(make_cluster, elr=0)  # Kafka before 4.1
    assert read_partitions(cluster.bootstrap_servers, "orders", 1)[0] == [b"replicated", b"leader alone"]
