"""Admin requests answered as Kafka answers them: topic names, partition assignments,
every topic setting Kafka knows, and list settings emptied by SUBTRACT."""

from __future__ import annotations

import re

import pytest
from confluent_kafka import KafkaError as CKError
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions,
                                   NewTopic)

from minikafka import Cluster


def admin(bootstrap):
    """Keep the client in a local variable: it must outlive the futures it returns."""
    return AdminClient({"bootstrap.servers": bootstrap})


def error_of(fut) -> KafkaException:
    with pytest.raises(KafkaException) as info:
        fut.result(10)
    return info.value.args[0]


@pytest.mark.parametrize("name", ["abc\n", "abc\r", "a b", "ünïcode", "\n"])
def test_topic_names_with_other_characters_are_refused(make_cluster, tmp_path, name):
    cluster = make_cluster()
    client = admin(cluster.bootstrap_servers)
    err = error_of(client.create_topics([NewTopic(name, 1, 1)])[name])
    assert err.code() == CKError.TOPIC_EXCEPTION
    assert name not in cluster.topics()
    assert not any("\n" in p.name for p in cluster.data_dir.iterdir())


def test_create_partitions_follows_the_given_assignment(make_cluster):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("spread", partitions=1, replication_factor=2)
    client = admin(cluster.bootstrap_servers)
    client.create_partitions([NewPartitions("spread", 3, replica_assignment=[[3, 1], [2, 3]])])["spread"].result(10)
    parts = cluster.metadata.topics["spread"].partitions
    assert [p.replicas for p in parts[1:]] == [[3, 1], [2, 3]]
    assert [p.leader for p in parts[1:]] == [3, 2]


@pytest.mark.parametrize("assignment, why", [
    ([[1, 2]], "count"),           # two partitions added, one assignment
    ([[1], [2]], "replication"),   # the topic's replication factor is 2
    ([[1, 1], [2, 3]], "distinct"),
    ([[1, 9], [2, 3]], "live"),
])
def test_create_partitions_refuses_impossible_assignments(make_cluster, assignment, why):
    cluster = make_cluster(brokers=3)
    cluster.create_topic("spread", partitions=1, replication_factor=2)
    client = admin(cluster.bootstrap_servers)
    fut = client.create_partitions([NewPartitions("spread", 3, replica_assignment=assignment)])["spread"]
    err = error_of(fut)
    assert err.code() == CKError.INVALID_REPLICA_ASSIGNMENT, (why, err)
    assert len(cluster.metadata.topics["spread"].partitions) == 1


KAFKA_TOPIC_SETTINGS = {
    "file.delete.delay.ms": "30000", "flush.messages": "1000", "flush.ms": "500", "preallocate": "true",
    "segment.index.bytes": "1048576", "segment.jitter.ms": "10", "message.downconversion.enable": "false",
    "compression.zstd.level": "5", "local.retention.ms": "-2", "remote.storage.enable": "false",
    "leader.replication.throttled.replicas": "0:1,1:2", "message.timestamp.before.max.ms": "86400000",
}


def test_every_kafka_topic_setting_is_accepted_kept_and_described(make_cluster):
    cluster = make_cluster()
    cluster.create_topic("tuned")
    client = admin(cluster.bootstrap_servers)
    resource = ConfigResource("topic", "tuned", set_config=KAFKA_TOPIC_SETTINGS)
    client.alter_configs([resource])[resource].result(10)
    cluster.restart()
    client = admin(cluster.bootstrap_servers)
    described = client.describe_configs([ConfigResource("topic", "tuned")])
    entries = next(iter(described.values())).result(10)
    assert {k: entries[k].value for k in KAFKA_TOPIC_SETTINGS} == KAFKA_TOPIC_SETTINGS


def test_subtract_can_empty_a_list_setting(make_cluster):
    cluster = make_cluster()
    cluster.create_topic("policy", config={"cleanup.policy": "compact"})
    client = admin(cluster.bootstrap_servers)
    change = ConfigResource("topic", "policy", incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SUBTRACT)])
    client.incremental_alter_configs([change])[change].result(10)
    entries = next(iter(client.describe_configs([ConfigResource("topic", "policy")]).values())).result(10)
    assert entries["cleanup.policy"].value == ""


def test_append_starts_from_the_value_in_force_not_from_nothing(make_cluster):
    """APPEND compact to a topic with the default cleanup.policy gives delete,compact, as in
    Kafka (confluent-kafka's integration suite checks it); SUBTRACT delete then leaves compact."""
    cluster = make_cluster()
    cluster.create_topic("policy")
    client = admin(cluster.bootstrap_servers)

    def change(op, value):
        resource = ConfigResource("topic", "policy", incremental_configs=[
            ConfigEntry("cleanup.policy", value, incremental_operation=op)])
        client.incremental_alter_configs([resource])[resource].result(10)
        entries = next(iter(client.describe_configs([ConfigResource("topic", "policy")]).values())).result(10)
        return entries["cleanup.policy"].value
    assert change(AlterConfigOpType.APPEND, "compact") == "delete,compact"
    assert change(AlterConfigOpType.SUBTRACT, "delete") == "compact"


@pytest.mark.parametrize("count", [0, -1, 1.5, True, "2"])
def test_a_cluster_needs_at_least_one_broker(count):
    with pytest.raises(ValueError, match="at least one broker"):
        Cluster(brokers=count)


def test_broker_ids_may_start_elsewhere(make_cluster):
    cluster = make_cluster(brokers=2, first_node_id=0)
    assert sorted(cluster.brokers) == [0, 1] and cluster.broker().node_id == 0
    with pytest.raises(ValueError, match=re.escape("brokers 0..1")):
        cluster.start_broker(2)
    with pytest.raises(ValueError, match="does not exist"):
        cluster.broker(7)
