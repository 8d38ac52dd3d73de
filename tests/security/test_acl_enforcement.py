"""The authorizer on every admin API, through confluent's AdminClient: without an ACL each
request is refused with the error Kafka gives, and with a prefixed ACL the same request
succeeds. alice owns what starts with ``alice-``; of the ``shared`` topics she may only
DESCRIBE (so that the client gets as far as the API under test), ``hidden`` not even that."""

from __future__ import annotations

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicCollection, \
    TopicPartition
from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, AdminClient, AlterConfigOpType, \
    ConfigEntry, ConfigResource, NewPartitions, NewTopic, ResourcePatternType, ResourceType

from .conftest import acl_settings, confluent

TOPIC_DENIED, GROUP_DENIED = KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = KafkaError.CLUSTER_AUTHORIZATION_FAILED


def one(futures):
    """The result of a single-item admin call (a dict of one future, or a future)."""
    future = next(iter(futures.values())) if isinstance(futures, dict) else futures
    return future.result(10)


def error_of(call) -> int | None:
    try:
        call()
    except KafkaException as e:
        return e.args[0].code()
    return None


def alter_retention(name):
    entry = ConfigEntry("retention.ms", "60000", incremental_operation=AlterConfigOpType.SET)
    return ConfigResource("TOPIC", name, incremental_configs=[entry])


CASES = {  # API: (what alice asks, the error without an ACL)
    "CreateTopics": (lambda a, t, g: one(a.create_topics([NewTopic(t + "-new", 1, 1)])), TOPIC_DENIED),
    "DeleteTopics": (lambda a, t, g: one(a.delete_topics([t + "-doomed"])), TOPIC_DENIED),
    "CreatePartitions": (lambda a, t, g: one(a.create_partitions([NewPartitions(t, 2)])), TOPIC_DENIED),
    "DescribeConfigs": (lambda a, t, g: one(a.describe_configs([ConfigResource("TOPIC", t)])), TOPIC_DENIED),
    "IncrementalAlterConfigs": (lambda a, t, g: one(a.incremental_alter_configs([alter_retention(t)])),
                                TOPIC_DENIED),
    "DeleteRecords": (lambda a, t, g: one(a.delete_records([TopicPartition(t, 0, 0)])), TOPIC_DENIED),
    "Metadata (describe_topics)": (lambda a, t, g: one(a.describe_topics(TopicCollection(
        ["hidden" if t == "shared" else t]))), TOPIC_DENIED),
    "DescribeGroups": (lambda a, t, g: one(a.describe_consumer_groups([g])), GROUP_DENIED),
    "OffsetFetch": (lambda a, t, g: one(a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)])),
                    GROUP_DENIED),
    "OffsetCommit": (lambda a, t, g: one(a.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(g, [TopicPartition(t, 0, 0)])])), GROUP_DENIED),
    "DeleteGroups": (lambda a, t, g: one(a.delete_consumer_groups([g])), GROUP_DENIED),
}


@pytest.fixture
def setup(make_cluster):
    cluster = make_cluster(config=acl_settings(), in_memory=True)
    admin = AdminClient(confluent(cluster.bootstrap_servers, "admin", "admin-secret"))
    for name in ("alice-orders", "alice-orders-doomed", "shared", "shared-doomed", "hidden"):
        cluster.create_topic(name)
    one(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions("alice-group",
                                                                         [TopicPartition("alice-orders", 0, 0)])]))
    one(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions("shared-group",
                                                                         [TopicPartition("shared", 0, 0)])]))
    grants = [AclBinding(kind, "alice-", ResourcePatternType.PREFIXED, "User:alice", "*", AclOperation.ALL,
                         AclPermissionType.ALLOW) for kind in (ResourceType.TOPIC, ResourceType.GROUP)]
    grants.append(AclBinding(ResourceType.TOPIC, "shared", ResourcePatternType.PREFIXED, "User:alice", "*",
                             AclOperation.DESCRIBE, AclPermissionType.ALLOW))
    for future in admin.create_acls(grants).values():
        future.result(10)
    return cluster, AdminClient(confluent(cluster.bootstrap_servers, "alice", "alice-secret"))


@pytest.mark.parametrize("api", list(CASES))
def test_every_admin_api_is_refused_without_an_acl_and_allowed_with_one(setup, api):
    _, alice = setup
    call, denied = CASES[api]
    assert error_of(lambda: call(alice, "shared", "shared-group")) == denied
    assert error_of(lambda: call(alice, "alice-orders", "alice-group")) is None


def test_broker_settings_need_the_cluster(setup):
    _, alice = setup
    assert error_of(lambda: one(alice.describe_configs([ConfigResource("BROKER", "1")]))) == CLUSTER_DENIED


def test_list_groups_shows_only_the_groups_the_principal_may_describe(setup):
    _, alice = setup
    listed = alice.list_consumer_groups().result(10)
    assert [g.group_id for g in listed.valid] == ["alice-group"]


def test_authorized_operations_are_what_the_acls_allow(setup):
    cluster, alice = setup
    assert alice.describe_cluster(include_authorized_operations=True).result(10).authorized_operations is None
    admin = AdminClient(confluent(cluster.bootstrap_servers, "admin", "admin-secret"))
    assert AclOperation.ALTER in admin.describe_cluster(include_authorized_operations=True).result(10) \
        .authorized_operations
    group = one(alice.describe_consumer_groups(["alice-group"], include_authorized_operations=True))
    assert set(group.authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE}
    topic = one(alice.describe_topics(TopicCollection(["shared"]), include_authorized_operations=True))
    assert topic.authorized_operations == [AclOperation.DESCRIBE]


def test_list_offsets_needs_describe_on_the_topic(setup):
    """ListOffsets asks for what Metadata asks (DESCRIBE): a client stops at Metadata, so the
    request itself is sent raw, after a PLAIN login as alice."""
    from kio.schema.list_offsets.v7.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
    from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
    from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

    from tests.rawclient import RawClient

    cluster, _ = setup
    with RawClient(cluster.bootstrap_servers) as raw:
        raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert raw.request(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret")).error_code == 0
        topics = tuple(ListOffsetsTopic(name=name, partitions=(ListOffsetsPartition(
            partition_index=0, current_leader_epoch=-1, timestamp=-1),)) for name in ("hidden", "alice-orders"))
        answer = raw.request(ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics))
    assert [(t.name, t.partitions[0].error_code) for t in answer.topics] == [("hidden", TOPIC_DENIED),
                                                                            ("alice-orders", 0)]
