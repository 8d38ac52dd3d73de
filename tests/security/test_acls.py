"""ACLs with the real clients: CreateAcls, DescribeAcls, DeleteAcls through confluent's
AdminClient, and Kafka's authorizer enforced on what producers, consumers and
transactional producers do (KIP-140, KIP-290, KIP-679)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient, \
    ResourcePatternType, ResourceType

from .conftest import LIBRDKAFKA_LOG, STANDARD_AUTHORIZER, acl_settings, confluent, sasl_settings

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED


def allow(resource, name, op, principal="User:alice", pattern=LITERAL, permission=ALLOW) -> AclBinding:
    return AclBinding(resource, name, pattern, principal, "*", op, permission)


def everything(resource=ResourceType.ANY, pattern=ResourcePatternType.ANY) -> AclBindingFilter:
    return AclBindingFilter(resource, None, pattern, None, None, AclOperation.ANY, AclPermissionType.ANY)


class Cluster:
    """A SASL cluster with the standard authorizer, and admin (a super user) to set ACLs."""

    def __init__(self, make_cluster, **kwargs):
        self.cluster = make_cluster(config=acl_settings(), in_memory=True, **kwargs)
        self.bootstrap = self.cluster.bootstrap_servers
        self.admin = AdminClient(confluent(self.bootstrap, "admin", "admin-secret"))

    def grant(self, *bindings: AclBinding) -> None:
        for future in self.admin.create_acls(list(bindings)).values():
            future.result(10)

    def client(self, user: str = "alice", **more) -> dict:
        return confluent(self.bootstrap, user, f"{user}-secret", **more)


@pytest.fixture
def secured(make_cluster):
    return Cluster(make_cluster)


def deliver(config: dict, topic: str) -> KafkaError | None:
    producer, results = Producer({"message.timeout.ms": 5000, **config}), []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: results.append(err))
    producer.flush(10)
    assert results, "no delivery report"
    return results[0]


def consume(config: dict, topic: str, seconds: float = 10) -> tuple[list[bytes], KafkaError | None]:
    """Values read until one arrives, or the first error the consumer reports."""
    consumer = Consumer({"auto.offset.reset": "earliest", **config})
    consumer.subscribe([topic])
    values, error, deadline = [], None, time.monotonic() + seconds
    while not values and error is None and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None:
            error = msg.error() if msg.error() else None
            values += [] if msg.error() else [msg.value()]
    consumer.close()
    return values, error


def test_create_describe_and_delete_acls_with_the_admin_client(secured):
    bindings = [allow(ResourceType.TOPIC, "orders", AclOperation.WRITE),
                allow(ResourceType.TOPIC, "logs-", AclOperation.READ, pattern=PREFIXED),
                allow(ResourceType.TOPIC, "orders", AclOperation.READ, "User:bob", permission=DENY),
                allow(ResourceType.GROUP, "billing", AclOperation.READ)]
    secured.grant(*bindings)
    assert sorted(map(str, secured.admin.describe_acls(everything()).result(10))) == sorted(map(str, bindings))
    topics_only = secured.admin.describe_acls(everything(ResourceType.TOPIC)).result(10)
    assert len(topics_only) == 3
    # MATCH: every ACL that applies to the topic logs-app (the prefix), none of the literal orders ones
    match = AclBindingFilter(ResourceType.TOPIC, "logs-app", ResourcePatternType.MATCH, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    assert [b.name for b in secured.admin.describe_acls(match).result(10)] == ["logs-"]
    deny_filter = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, DENY)
    [deleted_future] = secured.admin.delete_acls([deny_filter]).values()
    deleted = deleted_future.result(10)
    assert [(b.principal, b.permission_type) for b in deleted] == [("User:bob", DENY)]
    assert len(secured.admin.describe_acls(everything()).result(10)) == 3


def test_an_invalid_acl_is_refused_alone(secured):
    cluster_acl = allow(ResourceType.BROKER, "my-cluster", AclOperation.ALTER)  # the cluster is "kafka-cluster"
    futures = secured.admin.create_acls([cluster_acl, allow(ResourceType.TOPIC, "t", AclOperation.READ)])
    with pytest.raises(KafkaException) as refused:
        futures[cluster_acl].result(10)
    assert refused.value.args[0].code() == KafkaError.INVALID_REQUEST and "kafka-cluster" in str(refused.value)
    assert [b.name for b in secured.admin.describe_acls(everything()).result(10)] == ["t"]


def test_acl_apis_need_an_authorizer_and_alter_on_the_cluster(secured, make_cluster):
    alice = AdminClient(secured.client())
    with pytest.raises(KafkaException) as refused:
        next(iter(alice.create_acls([allow(ResourceType.TOPIC, "t", AclOperation.READ)]).values())).result(10)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    plain = AdminClient({"bootstrap.servers": make_cluster(in_memory=True).bootstrap_servers, "logger": LIBRDKAFKA_LOG})
    with pytest.raises(KafkaException) as refused:
        next(iter(plain.create_acls([allow(ResourceType.TOPIC, "t", AclOperation.READ)]).values())).result(10)
    assert refused.value.args[0].code() == KafkaError.SECURITY_DISABLED  # no authorizer.class.name


def test_acls_survive_a_restart(make_cluster):
    cluster = make_cluster(config=acl_settings())  # persistent: ACLs are cluster metadata
    admin = AdminClient(confluent(cluster.bootstrap_servers, "admin", "admin-secret"))
    binding = allow(ResourceType.TOPIC, "orders", AclOperation.WRITE)
    admin.create_acls([binding])[binding].result(10)
    cluster.restart()
    admin = AdminClient(confluent(cluster.bootstrap_servers, "admin", "admin-secret"))
    assert [str(b) for b in admin.describe_acls(everything()).result(10)] == [str(binding)]


def test_a_producer_allowed_on_one_topic_only(secured):
    for topic in ("orders", "payments"):
        secured.cluster.create_topic(topic)
    secured.grant(allow(ResourceType.TOPIC, "orders", AclOperation.WRITE))
    assert deliver(secured.client(), "orders") is None
    assert deliver(secured.client(), "payments").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert deliver(secured.client("bob"), "orders").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_deny_wins_over_allow(secured):
    for topic in ("app-logs", "app-secrets"):
        secured.cluster.create_topic(topic)
    secured.grant(allow(ResourceType.TOPIC, "app-", AclOperation.ALL, pattern=PREFIXED),
                  allow(ResourceType.TOPIC, "app-secrets", AclOperation.WRITE, permission=DENY))
    assert deliver(secured.client(), "app-logs") is None
    assert deliver(secured.client(), "app-secrets").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_consumer_may_read_one_topic_in_one_group_only(secured):
    for topic in ("orders", "payments"):
        secured.cluster.create_topic(topic)
        assert deliver(secured.client("admin"), topic) is None
    secured.grant(allow(ResourceType.TOPIC, "orders", AclOperation.READ),
                  allow(ResourceType.GROUP, "billing", AclOperation.READ))
    assert consume(secured.client(**{"group.id": "billing"}), "orders") == ([b"v"], None)
    values, error = consume(secured.client(**{"group.id": "other"}), "orders")
    assert values == [] and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    values, error = consume(secured.client(**{"group.id": "billing"}), "payments")
    assert values == [] and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_metadata_leaves_out_topics_the_principal_may_not_describe(secured):
    for topic in ("orders", "payments"):
        secured.cluster.create_topic(topic)
    secured.grant(allow(ResourceType.TOPIC, "orders", AclOperation.READ))  # READ implies DESCRIBE
    alice = AdminClient(secured.client())
    assert set(alice.list_topics(timeout=10).topics) == {"orders"}
    named = alice.list_topics(topic="payments", timeout=10).topics["payments"]
    assert named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert {"orders", "payments"} <= set(secured.admin.list_topics(timeout=10).topics)  # the super user


def test_a_transactional_producer_needs_write_on_its_transactional_id(secured):
    secured.cluster.create_topic("orders")
    secured.grant(allow(ResourceType.TOPIC, "orders", AclOperation.WRITE))
    producer = Producer(secured.client(**{"transactional.id": "tx-orders"}))
    with pytest.raises(KafkaException) as refused:
        producer.init_transactions(10)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    secured.grant(allow(ResourceType.TRANSACTIONAL_ID, "tx-", AclOperation.WRITE, pattern=PREFIXED))
    producer = Producer(secured.client(**{"transactional.id": "tx-orders"}))
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("orders", b"in a transaction")
    producer.commit_transaction(10)


def test_an_idempotent_producer_needs_write_somewhere_or_idempotent_write(secured):
    secured.cluster.create_topic("orders")
    assert deliver(secured.client(**{"enable.idempotence": True}), "orders").code() in (
        KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED)
    secured.grant(allow(ResourceType.BROKER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE),
                  allow(ResourceType.TOPIC, "orders", AclOperation.WRITE))
    assert deliver(secured.client(**{"enable.idempotence": True}), "orders") is None


def test_allow_everyone_if_no_acl_found_lets_in_what_no_acl_covers(make_cluster):
    cluster = make_cluster(config=sasl_settings(**{"authorizer.class.name": STANDARD_AUTHORIZER,
                                                   "allow.everyone.if.no.acl.found": "true"}), in_memory=True)
    sasl = cluster.bootstrap_servers_of("SASL_PLAINTEXT")
    cluster.create_topic("open")
    cluster.create_topic("closed")
    # ANONYMOUS on PLAINTEXT, which no ACL names
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "logger": LIBRDKAFKA_LOG})
    binding = allow(ResourceType.TOPIC, "closed", AclOperation.WRITE, "User:bob")
    admin.create_acls([binding])[binding].result(10)
    assert deliver(confluent(sasl, "alice", "alice-secret"), "open") is None
    assert deliver(confluent(sasl, "alice", "alice-secret"), "closed").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert deliver(confluent(sasl, "bob", "bob-secret"), "closed") is None
