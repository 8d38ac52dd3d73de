"""ApiVersions advertises Apache Kafka 4.2's ranges (for the APIs minikafka has), so clients
that guess the broker's release from them get 4.2 (kafka-python), and Produce is listed from v0 as Kafka 4 lists
it (older librdkafka turns compression off otherwise) while v0-v2 are refused."""

from __future__ import annotations

import subprocess

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

from minikafka.protocol.apis import API_TABLE
from tests.conftest import has_kcat
from tests.rawclient import RawClient

KAFKA_4_2 = BROKER_API_VERSIONS[(4, 2)]  # what a 4.2 broker answers, as kafka-python recorded it

# The range that differs on purpose (see minikafka/protocol/apis.py): SaslHandshake v0 (raw
# SASL tokens) is not offered.
DIFFERENT = {17: (1, 1)}


def test_every_advertised_range_is_kafka_4_2s():
    for api in API_TABLE:
        assert api.key in KAFKA_4_2, f"{api.name} is not an API of Kafka 4.2"
        assert api.advertised_range == DIFFERENT.get(api.key, KAFKA_4_2[api.key]), api.name


def test_kafka_python_infers_kafka_4_2(make_cluster, kafka_admin):
    """kafka-python guesses the release from the ranges (4.2: ListOffsets v11) and then talks 4.2."""
    cluster = make_cluster(brokers=1)
    assert kafka_admin(cluster).get_broker_version_data(1).broker_version == (4, 2)


def test_produce_v0_to_v2_are_listed_but_refused(make_cluster):
    from kio.schema.api_versions.v3 import request as av
    cluster = make_cluster(brokers=1)
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(av.ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                flexible_response=False)
        produce = next(k for k in answer.api_keys if k.api_key == 0)
        assert (produce.min_version, produce.max_version) == (0, 13)
        client.send_frame(b"\x00\x00\x00\x02\x00\x00\x00\x07\x00\x01t" + b"\x00" * 12)  # Produce v2
        with pytest.raises((ConnectionError, OSError)):
            client.recv_frame()


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_librdkafka_compresses_as_with_kafka(make_cluster, codec):
    cluster = make_cluster(brokers=1)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "compression.codec": codec})
    p.produce("squeezed", b"x" * 2000)
    assert p.flush(10) == 0
    segment = cluster.segments("squeezed")[0][0]
    assert segment["size"] < 1000  # stored as the producer compressed it
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g", "auto.offset.reset": "earliest"})
    c.assign([TopicPartition("squeezed", 0, 0)])
    message = c.poll(10)
    c.close()
    assert message is not None and message.value() == b"x" * 2000


@pytest.mark.skipif(not has_kcat(), reason="kcat is not installed")
def test_kcat_with_an_older_librdkafka_compresses_too(make_cluster):
    """kcat's librdkafka (2.0 on Debian) checks Produce v0 before it compresses (KAFKA-18659)."""
    cluster = make_cluster(brokers=1)
    done = subprocess.run(["kcat", "-P", "-b", cluster.bootstrap_servers, "-t", "squeezed", "-z", "gzip"],
                          input=b"x" * 2000 + b"\n", capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert 0 < cluster.segments("squeezed")[0][0]["size"] < 500


def test_features_say_what_minikafka_has(make_cluster):
    """KIP-584: eligible leader replicas (KIP-966), the consumer group protocol, share groups and transaction
    protocol v2 (KIP-890 part 2), finalized as on a new Kafka 4.4 cluster, so a client that reads
    transaction.version uses v2."""
    from kio.schema.api_versions.v3 import request as av
    cluster = make_cluster(brokers=1)
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(av.ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                flexible_response=False)
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in answer.finalized_features}
    supported = {f.name: (f.min_version, f.max_version) for f in answer.supported_features}
    assert finalized == {"eligible.leader.replicas.version": (1, 1), "group.version": (1, 1),
                         "share.version": (1, 1), "transaction.version": (2, 2)}
    assert supported["transaction.version"] == (0, 2) and answer.finalized_features_epoch >= 0


def test_a_cluster_without_elr_finalizes_level_0(make_cluster):
    """eligible.leader.replicas.version=0 (a broker setting here, a feature level on Kafka) is what clients
    and kafka-features read: the cluster behaves as Kafka before 4.1."""
    from kio.schema.api_versions.v3 import request as av
    cluster = make_cluster(brokers=1, config={"eligible.leader.replicas.version": 0})
    with RawClient(cluster.bootstrap_servers) as client:
        answer = client.request(av.ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                flexible_response=False)
    finalized = {f.name: f.max_version_level for f in answer.finalized_features}
    assert finalized["eligible.leader.replicas.version"] == 0
