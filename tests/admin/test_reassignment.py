"""Partition reassignment (KIP-455) through kafka-python's admin client: the data really
moves to the new replicas, the old ones delete their files, the leader moves when it is
removed, a move can be cancelled, and bad targets get Kafka's errors."""

from __future__ import annotations

import pytest
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError, UnknownTopicOrPartitionError
from kafka.structs import TopicPartition

from minikafka.errors import ErrorCode
from tests.admin.helpers import produce, read_partitions, three_brokers, wait_for
from tests.rawclient import RawClient

TP = TopicPartition("orders", 0)


def partition_dirs(cluster, topic: str = "orders", index: int = 0) -> dict[int, list]:
    """Broker id -> its directories of the partition on disk."""
    return {b: [d / f"{topic}-{index}" for d in cluster.broker_log_dirs(b) if (d / f"{topic}-{index}").is_dir()]
            for b in cluster.node_ids}


def test_reassignment_moves_the_data_and_the_leader(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 1, 2)  # replicas [1, 2], leader 1
    values = produce(cluster, "orders", 50)
    admin = kafka_admin(cluster)
    assert admin.alter_partition_reassignments({TP: [3, 2]}) == {TP: None}
    assert wait_for(lambda: admin.list_partition_reassignments() == {})
    state = cluster.partition_state("orders")
    assert state["replicas"] == [3, 2] and sorted(state["isr"]) == [2, 3] and state["leader"] in (2, 3)
    assert state["log_end_offsets"] == {3: 50, 2: 50}
    dirs = partition_dirs(cluster)
    assert dirs[1] == [] and len(dirs[2]) == 1 and len(dirs[3]) == 1  # broker 1 deleted its files
    cluster.stop_broker(2)  # only the new replica is left to serve
    assert cluster.partition_state("orders")["leader"] == 3
    assert read_partitions(cluster.bootstrap_servers, "orders", 1)[0] == values


def test_a_move_in_progress_is_listed_and_can_be_cancelled(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 1, 2)
    produce(cluster, "orders", 10)
    cluster.stop_broker(3)  # the new replica cannot catch up while its broker is down
    admin = kafka_admin(cluster)
    admin.alter_partition_reassignments({TP: [3, 1]})
    assert admin.list_partition_reassignments() == {
        TP: {"replicas": [3, 1, 2], "adding_replicas": [3], "removing_replicas": [2]}}
    state = cluster.partition_state("orders")
    assert state["replicas"] == [3, 1, 2]  # Metadata shows every replica meanwhile
    assert (state["adding_replicas"], state["removing_replicas"]) == ([3], [2])
    assert admin.alter_partition_reassignments({TP: None}) == {TP: None}  # cancel
    assert admin.list_partition_reassignments() == {}
    assert cluster.partition_state("orders")["replicas"] == [1, 2]
    assert admin.alter_partition_reassignments({TP: None}) == {TP: NoReassignmentInProgressError}
    cluster.start_broker(3)
    assert partition_dirs(cluster)[3] == []


def test_a_removed_broker_that_was_down_deletes_its_replica_when_it_returns(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path)
    cluster.create_topic("orders", 1, 2)  # [1, 2]
    produce(cluster, "orders", 10)
    cluster.stop_broker(2)
    admin = kafka_admin(cluster)
    admin.alter_partition_reassignments({TP: [1, 3]})
    assert wait_for(lambda: admin.list_partition_reassignments() == {})
    assert len(partition_dirs(cluster)[2]) == 1  # still on broker 2's disk while it is down
    cluster.start_broker(2)
    assert partition_dirs(cluster)[2] == []
    assert cluster.partition_state("orders")["log_end_offsets"] == {1: 10, 3: 10}


def test_throttled_replicas_catch_up_only_when_the_throttle_goes(make_cluster, tmp_path, kafka_admin):
    cluster = three_brokers(make_cluster, tmp_path, **{"replica.lag.time.max.ms": 2000})
    cluster.create_topic("orders", 1, 1, config={"follower.replication.throttled.replicas": "0:2"})
    produce(cluster, "orders", 40)  # 40 batches; a rate of 1 byte/s lets one through per second
    admin = kafka_admin(cluster)
    throttle = {"follower.replication.throttled.rate": "1"}
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2", throttle)], incremental=True)
    admin.alter_partition_reassignments({TP: [1, 2]})
    assert not wait_for(lambda: admin.list_partition_reassignments() == {}, timeout=1.5)
    assert cluster.partition_state("orders")["log_end_offsets"][2] < 10
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "2",
                                        {"follower.replication.throttled.rate": ("DELETE", None)})],
                        incremental=True)
    assert wait_for(lambda: admin.list_partition_reassignments() == {})
    assert cluster.partition_state("orders")["log_end_offsets"] == {1: 40, 2: 40}


@pytest.mark.parametrize("target", [[1, 1], [1, 9]])
def test_repeated_or_unknown_brokers_are_refused(make_cluster, target, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 2)
    result = kafka_admin(cluster).alter_partition_reassignments({TP: target})
    assert result == {TP: InvalidReplicationAssignmentError}
    assert cluster.partition_state("orders")["replicas"] == [1, 2]


def test_unknown_partitions_are_refused(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 2)
    other, missing = TopicPartition("orders", 4), TopicPartition("missing", 0)
    result = kafka_admin(cluster).alter_partition_reassignments({other: [1, 2], missing: [1, 2]})
    assert result == {other: UnknownTopicOrPartitionError, missing: UnknownTopicOrPartitionError}


def raw_reassign(cluster, replicas, allow_rf_change: bool):
    """What kafka-python will not send: an empty target, and v1's allowReplicationFactorChange=false."""
    from kio.schema.alter_partition_reassignments.v1 import request as req
    from kio.static.primitive import i32
    request = req.AlterPartitionReassignmentsRequest(
        allow_replication_factor_change=allow_rf_change,
        topics=(req.ReassignableTopic(name="orders", partitions=(req.ReassignablePartition(
            partition_index=i32(0), replicas=tuple(i32(b) for b in replicas)),)),))
    with RawClient(cluster.bootstrap_servers) as client:
        response = client.request(request)
    return response.responses[0].partitions[0]


def test_an_empty_target_and_a_forbidden_replication_factor_change_are_refused(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("orders", 1, 2)
    assert raw_reassign(cluster, [], True).error_code == ErrorCode.invalid_replica_assignment
    answer = raw_reassign(cluster, [1, 2, 3], False)
    assert answer.error_code == ErrorCode.invalid_replication_factor and "from 2 to 3" in answer.error_message
    assert raw_reassign(cluster, [2, 3], False).error_code == ErrorCode.none
