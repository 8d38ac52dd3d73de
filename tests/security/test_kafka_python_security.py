"""kafka-python's own admin client and clients against a secured broker: ACLs, SCRAM
credentials, and the authorization errors its producer and consumer raise."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, \
    KafkaAdminClient, ResourcePattern, ResourcePatternFilter, ResourceType
from kafka.admin._users import ScramMechanism, UserScramCredentialUpsertion
from kafka.errors import ClusterAuthorizationFailedError, GroupAuthorizationFailedError, SecurityDisabledError, \
    TopicAuthorizationFailedError

from .conftest import acl_settings, kafka_python


def acl(name: str, op: ACLOperation, principal: str = "User:alice",
        pattern: ACLResourcePatternType = ACLResourcePatternType.LITERAL) -> ACL:
    return ACL(principal, "*", op, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, name, pattern))


ANY_TOPIC_ACL = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                          ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY))


@pytest.fixture
def secured(make_cluster):
    return make_cluster(config=acl_settings(), in_memory=True)


def admin(cluster, user: str = "admin") -> KafkaAdminClient:
    return KafkaAdminClient(**kafka_python(cluster.bootstrap_servers, user, f"{user}-secret"))


def test_acls_with_kafka_pythons_admin_client(secured):
    client = admin(secured)
    created = client.create_acls([acl("orders", ACLOperation.WRITE),
                                  acl("logs-", ACLOperation.READ, pattern=ACLResourcePatternType.PREFIXED)])
    assert len(created["succeeded"]) == 2 and not created["failed"]
    acls, _error = client.describe_acls(ANY_TOPIC_ACL)
    assert sorted(a.resource_pattern.resource_name for a in acls) == ["logs-", "orders"]
    [(_, deleted, _)] = client.delete_acls([ACLFilter(None, None, ACLOperation.WRITE, ACLPermissionType.ANY,
                                                      ResourcePatternFilter(ResourceType.TOPIC, None,
                                                                            ACLResourcePatternType.ANY))])
    assert [a.resource_pattern.resource_name for a in deleted] == ["orders"]
    client.close()


def test_describe_acls_needs_describe_on_the_cluster_and_an_authorizer(secured, make_cluster):
    client = admin(secured, "alice")
    with pytest.raises(ClusterAuthorizationFailedError):
        client.describe_acls(ANY_TOPIC_ACL)
    client.close()
    client = KafkaAdminClient(bootstrap_servers=make_cluster(in_memory=True).bootstrap_servers)
    with pytest.raises(SecurityDisabledError):
        client.describe_acls(ANY_TOPIC_ACL)
    client.close()


def test_scram_credentials_with_kafka_pythons_admin_client(secured, topic_name):
    client = admin(secured)
    result = client.alter_user_scram_credentials([
        UserScramCredentialUpsertion("frank", ScramMechanism.SCRAM_SHA_256, "frank-secret", iterations=4096)])
    assert result == {"frank": None}, result
    described = client.describe_user_scram_credentials(["frank", "nobody"])
    assert described["frank"]["credential_infos"] == [{"mechanism": ScramMechanism.SCRAM_SHA_256, "iterations": 4096}]
    assert "does not exist" in described["nobody"]["error"]
    client.create_acls([acl(topic_name, ACLOperation.ALL, "User:frank")])
    client.close()
    secured.create_topic(topic_name)
    producer = KafkaProducer(**kafka_python(secured.bootstrap_servers, "frank", "frank-secret", "SCRAM-SHA-256"))
    assert producer.send(topic_name, b"by scram").get(10).offset == 0
    producer.close()


def test_scram_apis_need_the_cluster_permissions(secured):
    client = admin(secured, "alice")
    with pytest.raises(ClusterAuthorizationFailedError):
        client.describe_user_scram_credentials()
    result = client.alter_user_scram_credentials([
        UserScramCredentialUpsertion("mallory", ScramMechanism.SCRAM_SHA_256, "x", iterations=4096)])
    assert result == {"mallory": "Not authorized to alter SCRAM credentials."}
    client.close()


def test_kafka_python_clients_get_topic_and_group_authorization_failed(secured, topic_name):
    secured.create_topic(topic_name)
    secured.create_topic("allowed")
    client = admin(secured)
    client.create_acls([acl("allowed", ACLOperation.WRITE), acl("allowed", ACLOperation.READ)])
    client.close()
    producer = KafkaProducer(**kafka_python(secured.bootstrap_servers, "alice", "alice-secret"), max_block_ms=5000)
    assert producer.send("allowed", b"ok").get(10).offset == 0
    with pytest.raises(TopicAuthorizationFailedError):
        producer.send(topic_name, b"no").get(10)
    producer.close()
    consumer = KafkaConsumer("allowed", group_id="not-granted",
                             **kafka_python(secured.bootstrap_servers, "alice", "alice-secret"))
    with pytest.raises(GroupAuthorizationFailedError):
        consumer.poll(timeout_ms=5000)
    consumer.close()
