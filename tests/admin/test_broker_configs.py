"""Broker settings in DescribeConfigs and IncrementalAlterConfigs: sources and synonyms,
dynamic settings per broker and cluster-wide (KIP-226), refused changes, and broker logger
levels (KIP-412), through confluent-kafka's and kafka-python's admin clients."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from kafka.admin import ConfigResource as KpResource, ConfigResourceType

from tests.rawclient import RawClient

SOURCES = {1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}


def describe(client: AdminClient, kind, name: str) -> dict:
    resource = ConfigResource(kind, name)
    return client.describe_configs([resource])[resource].result(10)


def alter(client: AdminClient, kind, name: str, **changes):
    """name=value sets, name=None deletes."""
    entries = [ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.DELETE if v is None
                           else AlterConfigOpType.SET) for k, v in changes.items()]
    resource = ConfigResource(kind, name, incremental_configs=entries)
    return client.incremental_alter_configs([resource])[resource].result(10)


def synonyms(admin, broker: str, name: str) -> list[tuple[str, str, str]]:
    """Every place a broker setting has a value, most specific first (kafka-python keeps
    them all; confluent-kafka's dict keeps one per name)."""
    resource = KpResource(ConfigResourceType.BROKER, broker, [name])
    answer = admin.describe_configs([resource], include_synonyms=True, config_filter="all")
    return [(s["name"], s["value"], s["source"]) for s in answer["broker"][broker][name]["synonyms"]]


def alter_cluster_default(cluster, name: str, value: str | None) -> None:
    """The cluster-wide default (broker resource ""), which neither Python client will name."""
    from kio.schema.incremental_alter_configs.v1 import request as iac
    from kio.static.primitive import i8
    change = iac.AlterableConfig(name=name, config_operation=i8(0 if value is not None else 1), value=value)
    request = iac.IncrementalAlterConfigsRequest(validate_only=False, resources=(iac.AlterConfigsResource(
        resource_type=i8(4), resource_name="", configs=(change,)),))
    with RawClient(cluster.bootstrap_servers) as client:
        assert client.request(request).responses[0].error_code == 0


def describe_cluster_default(cluster) -> dict[str, tuple[str, int]]:
    from kio.schema.describe_configs.v4 import request as dc
    from kio.static.primitive import i8
    request = dc.DescribeConfigsRequest(resources=(dc.DescribeConfigsResource(
        resource_type=i8(4), resource_name="", configuration_keys=None),), include_synonyms=False,
        include_documentation=False)
    with RawClient(cluster.bootstrap_servers) as client:
        return {c.name: (c.value, c.config_source) for c in client.request(request).results[0].configs}


@pytest.fixture
def admin_and_cluster(make_cluster):
    cluster = make_cluster(brokers=2, config={"log.retention.ms": 3_600_000})
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers}), cluster


def test_broker_settings_carry_their_source_and_whether_they_can_change(admin_and_cluster, kafka_admin):
    client, cluster = admin_and_cluster
    configs = describe(client, ResourceType.BROKER, "1")
    retention, partitions = configs["log.retention.ms"], configs["num.partitions"]
    assert retention.value == "3600000" and SOURCES[int(retention.source)] == "STATIC_BROKER_CONFIG"
    assert not retention.is_read_only and partitions.is_read_only and partitions.is_default
    assert synonyms(kafka_admin(cluster), "1", "log.retention.ms") == [
        ("log.retention.ms", "3600000", "STATIC_BROKER_CONFIG"), ("log.retention.ms", "604800000", "DEFAULT_CONFIG")]


def test_dynamic_settings_per_broker_and_cluster_wide_reach_the_topics(admin_and_cluster, kafka_admin):
    client, cluster = admin_and_cluster
    alter_cluster_default(cluster, "log.retention.ms", "7200000")
    alter(client, ResourceType.BROKER, "2", log_retention_ms="60000")  # broker 2 only
    one = describe(client, ResourceType.BROKER, "1")
    assert (one["log.retention.ms"].value, SOURCES[int(one["log.retention.ms"].source)]) == \
        ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert synonyms(kafka_admin(cluster), "2", "log.retention.ms") == [
        ("log.retention.ms", "60000", "DYNAMIC_BROKER_CONFIG"),
        ("log.retention.ms", "7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ("log.retention.ms", "3600000", "STATIC_BROKER_CONFIG"), ("log.retention.ms", "604800000", "DEFAULT_CONFIG")]
    cluster.create_topic("events", 2, 2)
    topic = describe(client, ResourceType.TOPIC, "events")["retention.ms"]
    assert topic.value == "7200000" and SOURCES[int(topic.source)] == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    replica_on_2 = cluster.call(lambda: cluster.broker(2).local_replica("events", 0).config["retention.ms"])
    assert replica_on_2 == 60000  # broker 2's replicas follow its own dynamic value
    assert describe_cluster_default(cluster) == {"log.retention.ms": ("7200000", 3),
                                                 "min.insync.replicas": ("1", 3)}, "ELR's cluster-level setting too"
    cluster.restart()  # kept in the metadata log
    assert describe(client, ResourceType.BROKER, "2")["log.retention.ms"].value == "60000"
    alter(client, ResourceType.BROKER, "2", log_retention_ms=None)
    assert describe(client, ResourceType.BROKER, "2")["log.retention.ms"].value == "7200000"


def test_changes_kafka_refuses(admin_and_cluster):
    client, _ = admin_and_cluster
    with pytest.raises(Exception, match=r"INVALID_CONFIG.*dynamically: num\.partitions"):
        alter(client, ResourceType.BROKER, "1", num_partitions="3")
    with pytest.raises(Exception, match=r"INVALID_CONFIG.*log\.retention\.ms must be a whole number"):
        alter(client, ResourceType.BROKER, "1", log_retention_ms="soon")
    with pytest.raises(Exception, match=r"INVALID_CONFIG.*Unknown broker setting"):
        alter(client, ResourceType.BROKER, "1", no_such_setting="1")
    assert describe(client, ResourceType.BROKER, "1")["num.partitions"].value == "1"


def test_broker_logger_levels_are_listed_and_changed(make_cluster, kafka_admin):
    cluster = make_cluster(brokers=1)
    admin = kafka_admin(cluster)
    resource = KpResource(ConfigResourceType.BROKER_LOGGER, "1")
    listed = admin.describe_configs([resource])["broker_logger"]["1"]
    assert {"root", "minikafka.broker", "minikafka.controller"} <= set(listed)
    assert listed["minikafka.controller"]["config_source"] == "DYNAMIC_BROKER_LOGGER_CONFIG"
    logger = logging.getLogger("minikafka.controller")
    try:
        change = KpResource(ConfigResourceType.BROKER_LOGGER, "1", {"minikafka.controller": "TRACE"})
        admin.alter_configs([change], incremental=True)
        assert logger.level == 5
        assert admin.describe_configs([resource])["broker_logger"]["1"]["minikafka.controller"]["value"] == "TRACE"
        reset = KpResource(ConfigResourceType.BROKER_LOGGER, "1", {"minikafka.controller": ("DELETE", None)})
        admin.alter_configs([reset], incremental=True)
        assert logger.level == logging.NOTSET
    finally:
        logger.setLevel(logging.NOTSET)


@pytest.mark.parametrize("change, error", [({"minikafka.controller": "LOUD"}, "InvalidConfigurationError"),
                                           ({"nobody.here": "INFO"}, "InvalidConfigurationError"),
                                           ({"minikafka.controller": ("APPEND", "INFO")}, "InvalidRequestError"),
                                           ({"root": ("DELETE", None)}, "InvalidRequestError")])
def test_broker_logger_changes_kafka_refuses(make_cluster, change, error, kafka_admin):
    cluster = make_cluster(brokers=1)
    answer = kafka_admin(cluster).alter_configs([KpResource(ConfigResourceType.BROKER_LOGGER, "1", change)],
                                                incremental=True, raise_on_unknown=False)
    assert error in answer["broker_logger"]["1"]
    assert logging.getLogger("minikafka.controller").level == logging.NOTSET


def test_listeners_and_advertised_listeners_are_described_as_the_broker_opened_them(make_cluster):
    """Set in the file, both are STATIC_BROKER_CONFIG with each broker's own ports; unset,
    listeners is the address the broker opened (DEFAULT_CONFIG) and advertised.listeners null."""
    cluster = make_cluster(brokers=2, config={"listeners": "PLAINTEXT://127.0.0.1:0",
                                              "advertised.listeners": "PLAINTEXT://localhost:0"})
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for node_id in (1, 2):
        configs = describe(client, ResourceType.BROKER, str(node_id))
        port = cluster.all_listeners[node_id][0].port
        assert configs["listeners"].value == f"PLAINTEXT://127.0.0.1:{port}"
        assert configs["advertised.listeners"].value == f"PLAINTEXT://localhost:{port}"
        assert {SOURCES[configs[n].source] for n in ("listeners", "advertised.listeners")} == {"STATIC_BROKER_CONFIG"}
    plain = make_cluster(brokers=1)
    configs = describe(AdminClient({"bootstrap.servers": plain.bootstrap_servers}), ResourceType.BROKER, "1")
    assert configs["listeners"].value == f"PLAINTEXT://127.0.0.1:{plain.ports[1]}"
    assert SOURCES[configs["listeners"].source] == "DEFAULT_CONFIG"
    assert configs["advertised.listeners"].value is None and configs["advertised.listeners"].is_default


def try_cluster_default(cluster, name: str, value: str | None) -> tuple[int, str | None]:
    """Like alter_cluster_default, but the answer's error code and message, to check a refusal."""
    from kio.schema.incremental_alter_configs.v1 import request as iac
    from kio.static.primitive import i8
    request = iac.IncrementalAlterConfigsRequest(resources=(iac.AlterConfigsResource(
        resource_type=i8(4), resource_name="", configs=(iac.AlterableConfig(
            name=name, config_operation=i8(1 if value is None else 0), value=value),)),), validate_only=False)
    with RawClient(cluster.bootstrap_servers) as client:
        [answer] = client.request(request).responses
        return answer.error_code, answer.error_message


def test_with_eligible_leader_replicas_the_cluster_keeps_a_cluster_level_min_insync_replicas(make_cluster):
    """KIP-966 on (a new 4.1+ cluster's default): the cluster-wide default broker resource ""
    holds min.insync.replicas (DYNAMIC_DEFAULT_BROKER_CONFIG, the static value), it may be
    changed but not removed; with ELR off nothing is added."""
    cluster = make_cluster(brokers=1, config={"min.insync.replicas": 2})
    assert describe_cluster_default(cluster) == {"min.insync.replicas": ("2", 3)}
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    assert SOURCES[describe(client, ResourceType.BROKER, "1")["min.insync.replicas"].source] == \
        "DYNAMIC_DEFAULT_BROKER_CONFIG"
    code, message = try_cluster_default(cluster, "min.insync.replicas", None)
    assert code == 40 and "cluster-level min.insync.replicas" in message, "INVALID_CONFIG"
    assert try_cluster_default(cluster, "min.insync.replicas", "1") == (0, None)
    cluster.restart()
    assert describe_cluster_default(cluster) == {"min.insync.replicas": ("1", 3)}, "kept, not reset"
    old = make_cluster(brokers=1, config={"eligible.leader.replicas.version": 0})
    assert describe_cluster_default(old) == {}
