"""The cluster-view handlers alone (issue 27): Metadata, ApiVersions, DescribeQuorum,
DescribeCluster, ListConfigResources and DescribeTopicPartitions. Each gets a ``Caller`` and the
tiny fake ports of ``tests.fake_cluster``, never a broker, a socket or a Cluster. Requests are
built at the version a client sends and lifted as dispatch lifts them.
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
from minikafka.handlers.api_versions import ApiVersions
from minikafka.handlers.describe_cluster import DescribeCluster
from minikafka.handlers.describe_quorum import DescribeQuorum, directory_id
from minikafka.handlers.describe_topic_partitions import DescribeTopicPartitions
from minikafka.handlers.dispatch import can_inject_error, lift
from minikafka.handlers.list_config_resources import ListConfigResources
from minikafka.handlers.metadata_api import Metadata
from minikafka.handlers.ports import (NOT_REQUESTED, Caller, ClusterViewPort, ConfigResourcesPort, QuorumPort,
                                      SettingsPort)
from minikafka.security.acl import CLUSTER_NAME, Operation, ResourceType
from tests.fake_authorizer import Acls
from tests.fake_cluster import FakeCluster
from tests.port_checks import assert_provides

DESCRIBE_CLUSTER = (Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)


def kio(api: str, version: int) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.request")


def caller(api_key: int, version: int, authorizer: Any = None, listener: str | None = None) -> Caller:
    return Caller(api_key, version, client_id="test", principal="User:alice", authorizer=authorizer,
                  listener=listener)


def run(handler: Any, api_key: int, request: Any, authorizer: Any = None, listener: str | None = None) -> Any:
    return asyncio.run(handler.handle(caller(api_key, request.__version__, authorizer, listener),
                                      lift(api_key, request)))


def describe_topic(name: str) -> tuple[Operation, ResourceType, str]:
    return Operation.DESCRIBE, ResourceType.TOPIC, name


@pytest.mark.parametrize("port", [ClusterViewPort, QuorumPort, SettingsPort, ConfigResourcesPort])
def test_broker_and_the_fake_provide_the_ports(port):
    """Structurally: every method of the port, with the same parameters (mypy checks the types in
    dispatch, where ``PortHandler.make(broker)`` takes a ``Ports``)."""
    assert_provides(port, Broker, FakeCluster)


def test_the_registry_builds_the_cluster_view_handlers_from_ports():
    for key in (3, 18, 55, 60, 74, 75):
        row = registry.HANDLERS[key]
        assert isinstance(row, registry.PortHandler)
        assert isinstance(row.make(FakeCluster()), row.make)  # type: ignore[arg-type]


# -- Metadata ------------------------------------------------------------------------------------

def metadata(version: int, names: Any, auto_create: bool = True, ids: Any = ()) -> Any:
    m = kio("metadata", version)
    if version == 0:
        return m.MetadataRequest(topics=tuple(m.MetadataRequestTopic(name=n) for n in names))
    if version < 4:
        topics = None if names is None else tuple(m.MetadataRequestTopic(name=n) for n in names)
        return m.MetadataRequest(topics=topics)
    if version < 10:
        topics = None if names is None else tuple(m.MetadataRequestTopic(name=n) for n in names)
    else:
        topics = None if names is None else (*(m.MetadataRequestTopic(name=n, topic_id=None) for n in names),
                                             *(m.MetadataRequestTopic(name=None, topic_id=i) for i in ids))
    if version < 8:
        return m.MetadataRequest(topics=topics, allow_auto_topic_creation=auto_create)
    if version < 11:
        return m.MetadataRequest(topics=topics, allow_auto_topic_creation=auto_create,
                                 include_cluster_authorized_operations=True, include_topic_authorized_operations=True)
    return m.MetadataRequest(topics=topics, allow_auto_topic_creation=auto_create,
                             include_topic_authorized_operations=True)


def test_metadata_lists_brokers_racks_controller_and_every_topic():
    cluster = FakeCluster()
    cluster.add("orders", 2, 2)
    answer = run(Metadata(cluster), 3, metadata(12, None))
    assert [(b.node_id, b.host, b.port, b.rack) for b in answer.brokers] == [
        (1, "127.0.0.1", 9092, "rack-a"), (2, "127.0.0.1", 9093, "rack-b"), (3, "127.0.0.1", 9094, None)]
    assert (answer.cluster_id, answer.controller_id) == ("fake-cluster", 1)
    [topic] = answer.topics
    assert (topic.name, topic.topic_id, topic.error_code) == (
        "orders", uuid.UUID(cluster.known["orders"].topic_id), ErrorCode.none)
    assert [(p.partition_index, p.leader_id, p.replica_nodes, p.isr_nodes) for p in topic.partitions] == [
        (0, 1, (1, 2), (1, 2)), (1, 2, (2, 1), (2, 1))]


def test_metadata_gives_the_endpoints_of_the_callers_listener():
    answer = run(Metadata(FakeCluster()), 3, metadata(12, None), listener="EXTERNAL")
    assert [(b.node_id, b.host, b.port) for b in answer.brokers] == [
        (1, "example.com", 19092), (2, "example.com", 19093), (3, "example.com", 19094)]
    unknown = run(Metadata(FakeCluster()), 3, metadata(12, None), listener="NOPE")
    assert unknown.brokers[0].host == "127.0.0.1"


def test_metadata_v0_reads_an_empty_list_as_every_topic_and_later_versions_as_none():
    cluster = FakeCluster()
    cluster.add("orders")
    assert [t.name for t in run(Metadata(cluster), 3, metadata(0, [])).topics] == ["orders"]
    assert run(Metadata(cluster), 3, metadata(1, [])).topics == ()
    assert [t.name for t in run(Metadata(cluster), 3, metadata(1, None)).topics] == ["orders"]


def test_metadata_marks_a_dead_leader_and_offline_replicas():
    cluster = FakeCluster()
    cluster.add("orders", 1, 3, leader=3)
    del cluster.brokers[3]
    [p] = run(Metadata(cluster), 3, metadata(9, ["orders"])).topics[0].partitions
    assert (p.error_code, p.leader_id, p.isr_nodes, p.offline_replicas) == (
        ErrorCode.leader_not_available, -1, (1, 2), (3,))
    [old] = run(Metadata(cluster), 3, metadata(1, ["orders"])).topics[0].partitions
    assert old.error_code == ErrorCode.leader_not_available and not hasattr(old, "offline_replicas")


def test_metadata_hides_topics_the_principal_may_not_describe():
    cluster = FakeCluster()
    for name in ("orders", "secret"):
        cluster.add(name)
    acls = Acls(describe_topic("orders"))
    assert [t.name for t in run(Metadata(cluster), 3, metadata(12, None), acls).topics] == ["orders"]
    named = run(Metadata(cluster), 3, metadata(12, ["orders", "secret"]), acls)
    assert [(t.name, t.error_code) for t in named.topics] == [
        ("orders", ErrorCode.none), ("secret", ErrorCode.topic_authorization_failed)]


def test_metadata_auto_creates_only_when_asked_enabled_and_allowed():
    cluster = FakeCluster()
    created = run(Metadata(cluster), 3, metadata(12, ["new"]))
    assert (created.topics[0].error_code, cluster.calls) == (ErrorCode.none, [("auto_create", "new")])
    not_asked = run(Metadata(cluster), 3, metadata(12, ["other"], auto_create=False))
    assert not_asked.topics[0].error_code == ErrorCode.unknown_topic_or_partition
    off = FakeCluster(auto_create=False)
    assert run(Metadata(off), 3, metadata(12, ["new"])).topics[0].error_code == ErrorCode.unknown_topic_or_partition
    may_describe_only = Acls(describe_topic("new"))
    denied = run(Metadata(FakeCluster()), 3, metadata(12, ["new"]), may_describe_only)
    assert denied.topics[0].error_code == ErrorCode.topic_authorization_failed
    may_create = Acls(describe_topic("new"), (Operation.CREATE, ResourceType.TOPIC, "new"))
    assert run(Metadata(FakeCluster()), 3, metadata(12, ["new"]), may_create).topics[0].error_code == ErrorCode.none


def test_metadata_answers_a_bad_name_invalid_topic_and_finds_topics_by_id():
    cluster = FakeCluster()
    orders = cluster.add("orders")
    bad = run(Metadata(cluster), 3, metadata(12, ["a/b"]))
    assert bad.topics[0].error_code == ErrorCode.invalid_topic_exception and cluster.calls == []
    by_id = run(Metadata(cluster), 3, metadata(12, [], ids=[uuid.UUID(orders.topic_id)]))
    assert [t.name for t in by_id.topics] == ["orders"]


def test_metadata_gives_cluster_operations_in_v8_to_10_only_to_who_may_describe_the_cluster():
    everything = run(Metadata(FakeCluster()), 3, metadata(8, None))
    assert everything.cluster_authorized_operations not in (NOT_REQUESTED, 0)
    denied = run(Metadata(FakeCluster()), 3, metadata(10, None), Acls())
    assert denied.cluster_authorized_operations == NOT_REQUESTED
    allowed = run(Metadata(FakeCluster()), 3, metadata(10, None), Acls(DESCRIBE_CLUSTER))
    assert allowed.cluster_authorized_operations == 1 << int(Operation.DESCRIBE)
    assert not hasattr(run(Metadata(FakeCluster()), 3, metadata(11, None)), "cluster_authorized_operations")


def test_metadata_topic_operations_when_asked():
    cluster = FakeCluster()
    cluster.add("orders")
    answer = run(Metadata(cluster), 3, metadata(12, ["orders"]), Acls(describe_topic("orders")))
    assert answer.topics[0].topic_authorized_operations == 1 << int(Operation.DESCRIBE)


def test_metadata_error_answer_keeps_the_brokers_and_fails_each_topic():
    cluster = FakeCluster()
    for name in ("orders", "clicks"):
        cluster.add(name)
    handler = Metadata(cluster)
    assert can_inject_error(3) and isinstance(handler, registry.AnswersErrors)
    every = handler.error_response(caller(3, 12), lift(3, metadata(12, None)), ErrorCode.not_controller)
    assert [(t.name, t.error_code) for t in every.topics] == [
        ("orders", ErrorCode.not_controller), ("clicks", ErrorCode.not_controller)]
    assert len(every.brokers) == 3
    named = handler.error_response(caller(3, 1), lift(3, metadata(1, ["nope"])), ErrorCode.not_controller)
    assert [(t.name, t.error_code) for t in named.topics] == [("nope", ErrorCode.not_controller)]


# -- ApiVersions ---------------------------------------------------------------------------------

def test_api_versions_finalizes_the_feature_levels_the_settings_choose_from_v3():
    cluster = FakeCluster()
    cluster.settings["transaction.version"] = 1
    answer = run(ApiVersions(cluster), 18, kio("api_versions", 3).ApiVersionsRequest(
        client_software_name="test", client_software_version="1"))
    finalized = {f.name: f.max_version_level for f in answer.finalized_features}
    assert finalized == {"eligible.leader.replicas.version": 1, "group.version": 1, "share.version": 1,
                         "transaction.version": 1}
    assert {a.api_key for a in answer.api_keys} >= {3, 18, 19, 75}
    old = run(ApiVersions(cluster), 18, kio("api_versions", 0).ApiVersionsRequest())
    assert old.error_code == ErrorCode.none and not hasattr(old, "finalized_features")


# -- DescribeQuorum ------------------------------------------------------------------------------

def quorum(version: int, topic: str = "__cluster_metadata", index: int = 0) -> Any:
    m = kio("describe_quorum", version)
    return m.DescribeQuorumRequest(topics=(m.TopicData(topic_name=topic, partitions=(
        m.PartitionData(partition_index=index),)),))


def test_describe_quorum_lists_voters_with_a_stopped_one_where_it_stopped():
    cluster = FakeCluster()
    del cluster.brokers[3]
    cluster.departed = {3: (100, 5_000)}
    answer = run(DescribeQuorum(cluster), 55, quorum(2))
    [partition] = answer.topics[0].partitions
    assert (partition.error_code, partition.leader_id, partition.leader_epoch, partition.high_watermark) == (
        ErrorCode.none, 1, 4, 120)
    assert [(v.replica_id, v.log_end_offset, v.last_fetch_timestamp) for v in partition.current_voters] == [
        (1, 120, 1_000_000), (2, 120, 1_000_000), (3, 100, 5_000)]
    assert partition.current_voters[0].replica_directory_id == directory_id("fake-cluster", 1)
    assert [(n.node_id, n.listeners[0].port) for n in answer.nodes] == [(1, 9092), (2, 9093)]
    old = run(DescribeQuorum(cluster), 55, quorum(0))
    assert not hasattr(old, "nodes") and len(old.topics[0].partitions[0].current_voters) == 3


def test_describe_quorum_answers_another_partition_unknown():
    answer = run(DescribeQuorum(FakeCluster()), 55, quorum(2, "orders"))
    [partition] = answer.topics[0].partitions
    assert (partition.error_code, partition.leader_id, partition.current_voters) == (
        ErrorCode.unknown_topic_or_partition, -1, ())


# -- DescribeCluster -----------------------------------------------------------------------------

def test_describe_cluster_lists_the_listeners_brokers_and_operations_only_when_asked_and_allowed():
    m = kio("describe_cluster", 0)
    answer = run(DescribeCluster(FakeCluster()), 60, m.DescribeClusterRequest(
        include_cluster_authorized_operations=False), listener="EXTERNAL")
    assert [(b.broker_id, b.host, b.rack) for b in answer.brokers] == [
        (1, "example.com", "rack-a"), (2, "example.com", "rack-b"), (3, "example.com", None)]
    assert (answer.cluster_id, answer.controller_id, answer.cluster_authorized_operations) == (
        "fake-cluster", 1, NOT_REQUESTED)
    asked = m.DescribeClusterRequest(include_cluster_authorized_operations=True)
    assert run(DescribeCluster(FakeCluster()), 60, asked, Acls()).cluster_authorized_operations == NOT_REQUESTED
    allowed = run(DescribeCluster(FakeCluster()), 60, asked, Acls(DESCRIBE_CLUSTER))
    assert allowed.cluster_authorized_operations == 1 << int(Operation.DESCRIBE)


# -- ListConfigResources -------------------------------------------------------------------------

def test_list_config_resources_names_each_type_asked():
    cluster = FakeCluster()
    cluster.add("orders")
    m = kio("list_config_resources", 1)
    answer = run(ListConfigResources(cluster), 74, m.ListConfigResourcesRequest(resource_types=(2, 4, 32)))
    assert [(r.resource_type, r.resource_name) for r in answer.config_resources] == [
        (2, "orders"), (4, "1"), (4, "2"), (4, "3"), (32, "billing")]
    every = run(ListConfigResources(cluster), 74, m.ListConfigResourcesRequest(resource_types=()))
    assert {r.resource_type for r in every.config_resources} == {2, 4, 8, 32}
    v0 = run(ListConfigResources(cluster), 74, kio("list_config_resources", 0).ListConfigResourcesRequest())
    assert (v0.error_code, v0.config_resources) == (ErrorCode.none, ())  # client metrics only: none here


def test_list_config_resources_refuses_unknown_types_and_principals_without_describe_configs():
    m = kio("list_config_resources", 1)
    bad = run(ListConfigResources(FakeCluster()), 74, m.ListConfigResourcesRequest(resource_types=(2, 99)))
    assert (bad.error_code, bad.config_resources) == (ErrorCode.invalid_request, ())
    denied = run(ListConfigResources(FakeCluster()), 74, m.ListConfigResourcesRequest(resource_types=(2,)), Acls())
    assert denied.error_code == ErrorCode.cluster_authorization_failed
    allowed = Acls((Operation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME))
    assert run(ListConfigResources(FakeCluster()), 74, m.ListConfigResourcesRequest(resource_types=(2,)),
               allowed).error_code == ErrorCode.none


# -- DescribeTopicPartitions ---------------------------------------------------------------------

def partitions_request(names: Any, limit: int = 2000, cursor: tuple[str, int] | None = None) -> Any:
    m = kio("describe_topic_partitions", 0)
    return m.DescribeTopicPartitionsRequest(topics=tuple(m.TopicRequest(name=n) for n in names),
                                            response_partition_limit=limit,
                                            cursor=None if cursor is None else m.Cursor(topic_name=cursor[0],
                                                                                        partition_index=cursor[1]))


def test_describe_topic_partitions_pages_through_topics_in_name_order():
    cluster = FakeCluster()
    cluster.add("b", 3)
    cluster.add("a", 2)
    first = run(DescribeTopicPartitions(cluster), 75, partitions_request([], limit=3))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [("a", [0, 1]), ("b", [0])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("b", 1)
    rest = run(DescribeTopicPartitions(cluster), 75, partitions_request([], limit=3, cursor=("b", 1)))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in rest.topics] == [("b", [1, 2])]
    assert rest.next_cursor is None


def test_describe_topic_partitions_answers_missing_bad_and_denied_names():
    cluster = FakeCluster()
    cluster.add("orders")
    cluster.add("secret")
    acls = Acls(describe_topic("orders"), describe_topic("nope"), describe_topic("a/b"))
    answer = run(DescribeTopicPartitions(cluster), 75, partitions_request(["secret", "orders", "nope", "a/b"]), acls)
    assert [(t.name, t.error_code) for t in answer.topics] == [
        ("a/b", ErrorCode.invalid_topic_exception), ("nope", ErrorCode.unknown_topic_or_partition),
        ("orders", ErrorCode.none), ("secret", ErrorCode.topic_authorization_failed)]
    assert answer.topics[-1].topic_id == uuid.UUID(int=0)
    every = run(DescribeTopicPartitions(cluster), 75, partitions_request([]), acls)
    assert [t.name for t in every.topics] == ["orders"]


def test_describe_topic_partitions_refuses_a_cursor_outside_the_names_asked():
    cluster = FakeCluster()
    cluster.add("orders")
    answer = run(DescribeTopicPartitions(cluster), 75, partitions_request(["orders"], cursor=("other", 0)))
    assert [(t.name, t.error_code) for t in answer.topics] == [("orders", ErrorCode.invalid_request)]


def test_describe_topic_partitions_gives_elr_and_marks_dead_leaders():
    cluster = FakeCluster()
    orders = cluster.add("orders", 1, 3, leader=3)
    orders.partitions[0].elr, orders.partitions[0].last_known_elr = [2], [3]
    del cluster.brokers[3]
    [p] = run(DescribeTopicPartitions(cluster), 75, partitions_request(["orders"])).topics[0].partitions
    assert (p.error_code, p.leader_id, p.eligible_leader_replicas, p.last_known_elr, p.offline_replicas) == (
        ErrorCode.leader_not_available, -1, (2,), (3,), (3,))
