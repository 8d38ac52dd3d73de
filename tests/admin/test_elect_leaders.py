"""ElectLeaders (KIP-460) with confluent-kafka's and kafka-python's admin clients: preferred
and unclean elections, and the per-partition errors a Kafka controller answers with."""

from __future__ import annotations

import pytest
from confluent_kafka import ElectionType, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.admin.helpers import produce, read_partitions, wait_for


def elect(cluster, election, partitions) -> dict:
    """(topic, partition) -> error code of confluent-kafka's elect_leaders."""
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    result = client.elect_leaders(election, partitions).result(10)
    return {(tp.topic, tp.partition): (err.code() if err else 0) for tp, err in result.items()}


def test_preferred_election_moves_leadership_to_the_first_replica(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 3)
    k = kafka_admin(cluster)
    k.alter_partition_reassignments({TopicPartition("orders", 0): [2, 1, 3]})  # same brokers, 2 preferred
    assert wait_for(lambda: cluster.partition_state("orders")["replicas"] == [2, 1, 3])
    assert cluster.partition_state("orders")["leader"] == 1  # reordering alone does not move the leader
    result = elect(cluster, ElectionType.PREFERRED, [TopicPartition("orders", 0)])
    assert result == {("orders", 0): 0}
    state = cluster.partition_state("orders")
    assert state["leader"] == 2 and state["leader_epoch"] >= 1
    again = elect(cluster, ElectionType.PREFERRED, [TopicPartition("orders", 0)])
    assert again == {("orders", 0): KafkaError.ELECTION_NOT_NEEDED}


def test_preferred_leader_that_is_down_is_not_available(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 3)
    cluster.stop_broker(1)
    assert cluster.partition_state("orders")["leader"] == 2
    result = elect(cluster, ElectionType.PREFERRED, [TopicPartition("orders", 0)])
    assert result == {("orders", 0): KafkaError.PREFERRED_LEADER_NOT_AVAILABLE}


def test_unclean_election_gives_an_offline_partition_a_leader_and_loses_what_it_lacked(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("ledger", 1, 2)  # replicas [1, 2]
    produce(cluster, "ledger", 5, prefix="both")
    cluster.stop_broker(2)  # the ISR shrinks to [1]
    produce(cluster, "ledger", 3, prefix="only-on-1-")
    cluster.stop_broker(1)  # the last in-sync replica goes: offline
    cluster.start_broker(2)  # out of sync, and unclean election is off
    assert cluster.partition_state("ledger")["leader"] == -1
    tp = [TopicPartition("ledger", 0)]
    preferred = elect(cluster, ElectionType.PREFERRED, tp)
    assert preferred == {("ledger", 0): KafkaError.PREFERRED_LEADER_NOT_AVAILABLE}
    unclean = elect(cluster, ElectionType.UNCLEAN, tp)
    assert unclean == {("ledger", 0): 0}
    state = cluster.partition_state("ledger")
    assert state["leader"] == 2 and state["isr"] == [2]
    assert read_partitions(cluster.bootstrap_servers, "ledger", 1)[0] == [b"both%d" % i for i in range(5)]
    again = elect(cluster, ElectionType.UNCLEAN, tp)
    assert again == {("ledger", 0): KafkaError.ELECTION_NOT_NEEDED}


def test_unclean_election_without_a_live_replica_and_unknown_partitions(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("lonely", 1, 1)  # one replica, on broker 1
    cluster.stop_broker(1)
    tps = [TopicPartition("lonely", 0), TopicPartition("lonely", 7), TopicPartition("nope", 0)]
    result = elect(cluster, ElectionType.UNCLEAN, tps)
    assert result == {("lonely", 0): KafkaError.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                             ("lonely", 7): KafkaError.UNKNOWN_TOPIC_OR_PART,
                             ("nope", 0): KafkaError.UNKNOWN_TOPIC_OR_PART}


def test_null_partition_list_elects_everywhere_and_leaves_out_what_needed_nothing(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("a", 3, 3)
    cluster.create_topic("b", 1, 3)
    k = kafka_admin(cluster)
    k.alter_partition_reassignments({TopicPartition("b", 0): [3, 1, 2]})
    assert wait_for(lambda: cluster.partition_state("b")["replicas"] == [3, 1, 2])
    result = elect(cluster, ElectionType.PREFERRED, None)
    assert result == {("b", 0): 0}  # every other partition already had its preferred leader
    assert cluster.partition_state("b")["leader"] == 3


def test_kafka_python_elect_leaders_reports_errors_per_partition(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 2, 3)
    k = kafka_admin(cluster)
    response = k.elect_leaders(0, {"orders": [0, 1]}, raise_errors=False)
    got = {(r.topic, p.partition_id): p.error_code
           for r in response.replica_election_results for p in r.partition_result}
    assert got == {("orders", 0): 84, ("orders", 1): 84}  # ELECTION_NOT_NEEDED
    with pytest.raises(Exception, match="UnknownTopicOrPartition"):
        k.elect_leaders(1, {"orders": [5]})
