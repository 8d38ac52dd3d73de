"""The topic-administration handlers alone (issue 27): CreateTopics, DeleteTopics, DeleteRecords,
CreatePartitions, AlterReplicaLogDirs, DescribeLogDirs, ElectLeaders and the two partition
reassignment APIs. Each gets a ``Caller`` and the tiny fake ports of ``tests.fake_cluster``,
never a broker, a socket or a Cluster. Requests are built at the version a client sends and
lifted as dispatch lifts them, so each answer is also checked to fit that version.
"""

from __future__ import annotations

import asyncio
import importlib
import uuid
from typing import Any

import pytest

from minikafka.broker import Broker
from minikafka.errors import ErrorCode
from minikafka.handlers import registry
from minikafka.handlers.alter_partition_reassignments import AlterPartitionReassignments
from minikafka.handlers.alter_replica_log_dirs import AlterReplicaLogDirs
from minikafka.handlers.create_partitions import CreatePartitions
from minikafka.handlers.create_topics import CreateTopics
from minikafka.handlers.delete_records import DeleteRecords
from minikafka.handlers.delete_topics import DeleteTopics
from minikafka.handlers.describe_log_dirs import DescribeLogDirs
from minikafka.handlers.dispatch import lift
from minikafka.handlers.elect_leaders import ElectLeaders
from minikafka.handlers.list_partition_reassignments import ListPartitionReassignments
from minikafka.handlers.ports import Caller, LogDirsPort, ReassignmentPort, TopicsPort
from minikafka.security.acl import CLUSTER_NAME, Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.fake_cluster import FakeCluster
from tests.port_checks import assert_provides

CREATE_ON_CLUSTER = (Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)


def kio(api: str, version: int) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.request")


def run(handler: Any, api_key: int, request: Any, authorizer: Any = None) -> Any:
    caller = Caller(api_key, request.__version__, client_id="test", principal="User:alice", authorizer=authorizer)
    return asyncio.run(handler.handle(caller, lift(api_key, request)))


@pytest.mark.parametrize("port", [TopicsPort, ReassignmentPort, LogDirsPort])
def test_broker_and_the_fake_provide_the_ports(port):
    """Structurally: every method of the port, with the same parameters (mypy checks the types in
    dispatch, where ``PortHandler.make(broker)`` takes a ``Ports``)."""
    assert_provides(port, Broker, FakeCluster)


def test_the_registry_builds_the_topic_handlers_from_ports():
    for key in (19, 20, 21, 34, 35, 37, 43, 45, 46):
        row = registry.HANDLERS[key]
        assert isinstance(row, registry.PortHandler)
        assert isinstance(row.make(FakeCluster()), row.make)  # type: ignore[arg-type]


# -- CreateTopics --------------------------------------------------------------------------------

def create(version: int, *topics: tuple[str, int, int], validate_only: bool = False, assignment: Any = ()) -> Any:
    m = kio("create_topics", version)
    return m.CreateTopicsRequest(validate_only=validate_only, topics=tuple(
        m.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf, configs=(
            m.CreatableTopicConfig(name="retention.ms", value="1000"),), assignments=tuple(
            m.CreatableReplicaAssignment(partition_index=i, broker_ids=ids) for i, ids in assignment))
        for name, partitions, rf in topics))


def test_create_topics_creates_with_counts_and_settings_and_answers_the_id_from_v7():
    cluster = FakeCluster()
    answer = run(CreateTopics(cluster), 19, create(7, ("orders", 3, 2)))
    [result] = answer.topics
    assert (result.error_code, result.num_partitions, result.replication_factor) == (ErrorCode.none, 3, 2)
    assert result.topic_id == uuid.UUID(cluster.known["orders"].topic_id)
    assert [(c.name, c.value, c.config_source) for c in result.configs] == [
        ("cleanup.policy", "delete", 5), ("retention.ms", "1000", 1)]
    assert cluster.calls == [("create", "orders", 3, 2, {"retention.ms": "1000"}, None, False)]


def test_create_topics_v4_has_no_settings_or_counts_in_its_answer():
    answer = run(CreateTopics(FakeCluster()), 19, create(4, ("orders", 3, 2)))
    [result] = answer.topics
    assert result.error_code == ErrorCode.none
    assert not hasattr(result, "configs") and not hasattr(result, "num_partitions")


@pytest.mark.parametrize(("partitions", "rf", "code"), [(0, 1, ErrorCode.invalid_partitions),
                                                        (-5, 1, ErrorCode.invalid_partitions),
                                                        (1, 4, ErrorCode.invalid_replication_factor),
                                                        (1, 0, ErrorCode.invalid_replication_factor)])
def test_create_topics_answers_bad_counts_per_topic_with_the_message(partitions, rf, code):
    cluster = FakeCluster()
    answer = run(CreateTopics(cluster), 19, create(7, ("bad", partitions, rf), ("good", 1, 1)))
    bad, good = answer.topics
    assert (bad.error_code, bad.num_partitions, bad.replication_factor) == (code, -1, -1)
    assert bad.error_message and bad.topic_id == uuid.UUID(int=0) and bad.configs is None
    assert good.error_code == ErrorCode.none and "bad" not in cluster.known


def test_create_topics_refuses_an_assignment_given_with_counts():
    answer = run(CreateTopics(FakeCluster()), 19, create(7, ("orders", 2, -1), assignment=[(0, (1, 2))]))
    assert answer.topics[0].error_code == ErrorCode.invalid_request
    ok = run(CreateTopics(FakeCluster()), 19, create(7, ("orders", -1, -1), assignment=[(0, (1, 2)), (1, (2, 3))]))
    assert (ok.topics[0].error_code, ok.topics[0].num_partitions, ok.topics[0].replication_factor) == (0, 2, 2)


def test_create_topics_validate_only_creates_nothing_and_gives_no_settings():
    cluster = FakeCluster()
    answer = run(CreateTopics(cluster), 19, create(7, ("orders", 3, 1), validate_only=True))
    assert (answer.topics[0].error_code, answer.topics[0].num_partitions, answer.topics[0].configs) == (0, 3, None)
    assert "orders" not in cluster.known


def test_create_topics_names_an_existing_topic():
    cluster = FakeCluster()
    cluster.add("orders")
    assert run(CreateTopics(cluster), 19, create(5, ("orders", 1, 1))).topics[0].error_code == \
        ErrorCode.topic_already_exists


def test_create_topics_needs_create_on_the_cluster_or_the_topic():
    cluster = FakeCluster()
    allowed = Acls((Operation.CREATE, ResourceType.TOPIC, "mine"))
    answer = run(CreateTopics(cluster), 19, create(7, ("mine", 1, 1), ("theirs", 1, 1)), allowed)
    assert [(t.name, t.error_code) for t in answer.topics] == [
        ("mine", ErrorCode.none), ("theirs", ErrorCode.topic_authorization_failed)]
    # created, but its settings are not shown to a principal that may not DESCRIBE_CONFIGS it
    assert (answer.topics[0].topic_config_error_code, answer.topics[0].configs) == (
        ErrorCode.topic_authorization_failed, None)
    assert list(cluster.known) == ["mine"]
    everything = run(CreateTopics(FakeCluster()), 19, create(7, ("theirs", 1, 1)), Acls(CREATE_ON_CLUSTER))
    assert everything.topics[0].error_code == ErrorCode.none


# -- DeleteTopics --------------------------------------------------------------------------------

def delete_by_name(*names: str) -> Any:
    return kio("delete_topics", 1).DeleteTopicsRequest(topic_names=names, timeout=1000)


def delete_v6(*states: tuple[str | None, uuid.UUID | None]) -> Any:
    m = kio("delete_topics", 6)
    return m.DeleteTopicsRequest(timeout=1000, topics=tuple(m.DeleteTopicState(name=n, topic_id=i) for n, i in states))


def test_delete_topics_v1_deletes_by_name_and_answers_unknown_ones():
    cluster = FakeCluster()
    cluster.add("orders")
    answer = run(DeleteTopics(cluster), 20, delete_by_name("orders", "nope"))
    assert [(r.name, r.error_code) for r in answer.responses] == [
        ("orders", ErrorCode.none), ("nope", ErrorCode.unknown_topic_or_partition)]
    assert not hasattr(answer.responses[0], "topic_id") and cluster.known == {}


def test_delete_topics_v6_by_id_answers_the_name_and_refuses_unknown_ids_and_both():
    cluster = FakeCluster()
    orders = uuid.UUID(cluster.add("orders").topic_id)
    cluster.add("clicks")
    answer = run(DeleteTopics(cluster), 20, delete_v6((None, orders), (None, uuid.uuid4()), ("clicks", orders)))
    assert [(r.name, r.topic_id, r.error_code) for r in answer.responses][:2] == [
        ("orders", orders, ErrorCode.none), (None, answer.responses[1].topic_id, ErrorCode.unknown_topic_id)]
    assert answer.responses[2].error_code == ErrorCode.invalid_request
    assert list(cluster.known) == ["clicks"]


def test_delete_topics_refuses_internal_topics_denied_principals_and_a_broker_that_forbids_it():
    cluster = FakeCluster()
    for name in ("__consumer_offsets", "orders", "clicks"):
        cluster.add(name)
    acls = Acls((Operation.DELETE, ResourceType.TOPIC, "orders"), (Operation.DELETE, ResourceType.TOPIC,
                                                                  "__consumer_offsets"))
    answer = run(DeleteTopics(cluster), 20, delete_by_name("__consumer_offsets", "orders", "clicks"), acls)
    assert [r.error_code for r in answer.responses] == [
        ErrorCode.invalid_request, ErrorCode.none, ErrorCode.topic_authorization_failed]
    disabled = FakeCluster(deletion=False)
    disabled.add("orders")
    assert run(DeleteTopics(disabled), 20, delete_by_name("orders")).responses[0].error_code == \
        ErrorCode.topic_deletion_disabled
    assert "orders" in disabled.known


# -- DeleteRecords -------------------------------------------------------------------------------

def delete_records(version: int, topic: str, *offsets: tuple[int, int]) -> Any:
    m = kio("delete_records", version)
    return m.DeleteRecordsRequest(timeout=1000, topics=(m.DeleteRecordsTopic(name=topic, partitions=tuple(
        m.DeleteRecordsPartition(partition_index=i, offset=o) for i, o in offsets)),))


def test_delete_records_moves_the_low_watermark_and_answers_each_partition():
    cluster = FakeCluster()
    cluster.high_watermarks = {("orders", 0): 10, ("orders", 1): 4}
    answer = run(DeleteRecords(cluster), 21, delete_records(0, "orders", (0, 7), (1, -1), (2, 0), (0, 11)))
    assert [(p.partition_index, p.low_watermark, p.error_code) for p in answer.topics[0].partitions] == [
        (0, 7, ErrorCode.none), (1, 4, ErrorCode.none), (2, -1, ErrorCode.unknown_topic_or_partition),
        (0, -1, ErrorCode.offset_out_of_range)]


def test_delete_records_refuses_internal_topics_and_denied_principals():
    cluster = FakeCluster()
    cluster.high_watermarks = {("__consumer_offsets", 0): 5, ("orders", 0): 5}
    internal = run(DeleteRecords(cluster), 21, delete_records(2, "__consumer_offsets", (0, 1)))
    assert internal.topics[0].partitions[0].error_code == ErrorCode.invalid_topic_exception
    denied = run(DeleteRecords(cluster), 21, delete_records(2, "orders", (0, 1)), Acls())
    assert denied.topics[0].partitions[0].error_code == ErrorCode.topic_authorization_failed
    assert cluster.calls == []


# -- CreatePartitions ----------------------------------------------------------------------------

def grow(version: int, name: str, count: int, assignments: Any = None, validate_only: bool = False) -> Any:
    m = kio("create_partitions", version)
    given = None if assignments is None else tuple(m.CreatePartitionsAssignment(broker_ids=a) for a in assignments)
    return m.CreatePartitionsRequest(timeout=1000, validate_only=validate_only, topics=(
        m.CreatePartitionsTopic(name=name, count=count, assignments=given),))


def test_create_partitions_grows_the_topic_with_its_assignments():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    answer = run(CreatePartitions(cluster), 37, grow(0, "orders", 4, [(1, 2), (2, 3)], validate_only=True))
    assert (answer.results[0].error_code, answer.results[0].error_message) == (ErrorCode.none, None)
    assert cluster.calls == [("grow", "orders", 4, True, [[1, 2], [2, 3]])]


def test_create_partitions_passes_on_invalid_partitions_and_unknown_topics_and_needs_alter():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    shrink = run(CreatePartitions(cluster), 37, grow(3, "orders", 2))
    assert shrink.results[0].error_code == ErrorCode.invalid_partitions
    assert "2 partitions" in shrink.results[0].error_message
    assert run(CreatePartitions(cluster), 37, grow(3, "nope", 5)).results[0].error_code == \
        ErrorCode.unknown_topic_or_partition
    denied = run(CreatePartitions(cluster), 37, grow(3, "orders", 5), Acls((Operation.ALTER, ResourceType.TOPIC, "x")))
    assert denied.results[0].error_code == ErrorCode.topic_authorization_failed and cluster.calls == []


# -- AlterReplicaLogDirs and DescribeLogDirs -----------------------------------------------------

def test_alter_replica_log_dirs_answers_each_partition():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    cluster.dirs = [("/d1", 100, 50, False), ("/d2", 100, 50, False)]
    m = kio("alter_replica_log_dirs", 1)
    request = m.AlterReplicaLogDirsRequest(dirs=(
        m.AlterReplicaLogDir(path="/d2", topics=(m.AlterReplicaLogDirTopic(name="orders", partitions=(0, 5)),)),
        m.AlterReplicaLogDir(path="/elsewhere", topics=(m.AlterReplicaLogDirTopic(name="orders", partitions=(1,)),))))
    answer = run(AlterReplicaLogDirs(cluster), 34, request)
    assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.results] == [
        ("orders", [(0, ErrorCode.none), (5, ErrorCode.unknown_topic_or_partition),
                    (1, ErrorCode.log_dir_not_found)])]
    assert cluster.calls == [("move", "orders", 0, "/d2")]


def describe_dirs(version: int, topics: Any) -> Any:
    m = kio("describe_log_dirs", version)
    given = None if topics is None else tuple(m.DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics)
    return m.DescribeLogDirsRequest(topics=given)


def test_describe_log_dirs_lists_each_directory_its_replicas_and_an_offline_one():
    cluster = FakeCluster()
    cluster.dirs = [("/d1", 1000, 400, False), ("/d2", 1000, 400, True)]
    cluster.placements = [("/d1", "orders", 0, 300, 0, False), ("/d2", "orders", 0, 100, 12, True),
                          ("/d1", "orders", 1, 50, 0, False)]
    answer = run(DescribeLogDirs(cluster), 35, describe_dirs(4, [("orders", (0,))]))
    d1, d2 = answer.results
    assert (d1.log_dir, d1.error_code, d1.total_bytes, d1.usable_bytes) == ("/d1", ErrorCode.none, 1000, 400)
    assert [(p.partition_index, p.partition_size, p.is_future_key) for p in d1.topics[0].partitions] == [
        (0, 300, False)]
    assert (d2.error_code, d2.total_bytes, d2.usable_bytes) == (ErrorCode.kafka_storage_error, -1, -1)
    assert [(p.offset_lag, p.is_future_key) for p in d2.topics[0].partitions] == [(12, True)]
    old = run(DescribeLogDirs(cluster), 35, describe_dirs(1, None))
    assert not hasattr(old.results[0], "total_bytes") and len(old.results[0].topics[0].partitions) == 2


def test_describe_log_dirs_of_a_broker_in_memory_reports_one_virtual_directory():
    cluster = FakeCluster()
    cluster.placements = [(None, "orders", 0, 300, 0, False)]
    answer = run(DescribeLogDirs(cluster), 35, describe_dirs(4, None))
    [virtual] = answer.results
    assert (virtual.log_dir, virtual.total_bytes, virtual.topics[0].partitions[0].partition_size) == (
        "/in-memory/broker-1", -1, 300)


# -- ElectLeaders and partition reassignments ----------------------------------------------------

def elect(version: int, topics: Any, election_type: int = 0) -> Any:
    m = kio("elect_leaders", version)
    given = None if topics is None else tuple(m.TopicPartitions(topic=t, partitions=ps) for t, ps in topics)
    if version == 0:
        return m.ElectLeadersRequest(topic_partitions=given)
    return m.ElectLeadersRequest(election_type=election_type, topic_partitions=given)


def test_elect_leaders_answers_each_partition_once_and_v0_is_preferred():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    cluster.errors = {("orders", 1): ErrorCode.preferred_leader_not_available}
    answer = run(ElectLeaders(cluster), 43, elect(0, [("orders", (0, 0, 1, 7))]))
    assert [(p.partition_id, p.error_code) for p in answer.replica_election_results[0].partition_result] == [
        (0, ErrorCode.none), (1, ErrorCode.preferred_leader_not_available), (7, ErrorCode.unknown_topic_or_partition)]
    assert not hasattr(answer, "error_code")
    assert cluster.calls == [("elect", "orders", 0, False)]


def test_elect_leaders_unclean_and_every_partition_leaves_out_those_that_needed_none():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    cluster.errors = {("orders", 0): ErrorCode.election_not_needed}
    answer = run(ElectLeaders(cluster), 43, elect(2, None, election_type=1))
    assert answer.error_code == ErrorCode.none
    assert [(p.partition_id, p.error_code) for p in answer.replica_election_results[0].partition_result] == [
        (1, ErrorCode.none)]
    assert cluster.calls == [("elect", "orders", 1, True)]


def test_elect_leaders_refuses_an_unknown_election_type():
    answer = run(ElectLeaders(FakeCluster()), 43, elect(2, None, election_type=7))
    assert (answer.error_code, answer.replica_election_results) == (ErrorCode.invalid_request, ())


def test_alter_partition_reassignments_passes_targets_and_errors_per_partition():
    cluster = FakeCluster()
    cluster.add("orders", 2)
    cluster.errors = {("orders", 1): ErrorCode.invalid_replication_factor}
    m = kio("alter_partition_reassignments", 1)
    request = m.AlterPartitionReassignmentsRequest(allow_replication_factor_change=False, topics=(
        m.ReassignableTopic(name="orders", partitions=(m.ReassignablePartition(partition_index=0, replicas=(2, 3)),
                                                       m.ReassignablePartition(partition_index=1, replicas=(1, 2, 3)),
                                                       m.ReassignablePartition(partition_index=9, replicas=None))),))
    answer = run(AlterPartitionReassignments(cluster), 45, request)
    assert (answer.error_code, answer.allow_replication_factor_change) == (ErrorCode.none, False)
    assert [(p.partition_index, p.error_code) for p in answer.responses[0].partitions] == [
        (0, ErrorCode.none), (1, ErrorCode.invalid_replication_factor), (9, ErrorCode.unknown_topic_or_partition)]
    assert cluster.calls == [("reassign", "orders", 0, [2, 3], False)]
    v0 = kio("alter_partition_reassignments", 0)
    cancel = v0.AlterPartitionReassignmentsRequest(topics=(v0.ReassignableTopic(name="orders", partitions=(
        v0.ReassignablePartition(partition_index=0, replicas=None),)),))
    assert run(AlterPartitionReassignments(cluster), 45, cancel).responses[0].partitions[0].error_code == 0
    assert cluster.calls[-1] == ("reassign", "orders", 0, None, True)  # v0 may always change the factor


def test_list_partition_reassignments_shows_only_partitions_that_move():
    cluster = FakeCluster()
    orders = cluster.add("orders", 3)
    cluster.add("clicks", 1)
    orders.partitions[1].adding_replicas, orders.partitions[1].replicas = [3], [1, 2, 3]
    orders.partitions[2].removing_replicas = [3]
    m = kio("list_partition_reassignments", 0)
    every = run(ListPartitionReassignments(cluster), 46, m.ListPartitionReassignmentsRequest(topics=None))
    assert [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas)
                      for p in t.partitions]) for t in every.topics] == [
        ("orders", [(1, (1, 2, 3), (3,), ()), (2, tuple(orders.partitions[2].replicas), (), (3,))])]
    some = run(ListPartitionReassignments(cluster), 46, m.ListPartitionReassignmentsRequest(topics=(
        m.ListPartitionReassignmentsTopics(name="orders", partition_indexes=(2,)),
        m.ListPartitionReassignmentsTopics(name="nope", partition_indexes=(0,)))))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in some.topics] == [("orders", [2])]
