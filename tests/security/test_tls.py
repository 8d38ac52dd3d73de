"""TLS listeners (SSL, SASL_SSL) with a certificate the course makes (kafka_course.certificates).

The clients trust the course CA (``ssl.ca.location``, kafka-python's ``ssl_cafile``); a
client that does not trust it cannot connect; SASL works inside TLS; with
``ssl.client.auth=required`` a client certificate names the principal the ACLs see.
And the point of it all, read off the wire through a proxy: on a PLAINTEXT listener
the record's value is there to read, on an SSL listener it is not.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from kafka import KafkaProducer

from kafka_course.certificates import make_certificates

from .conftest import LIBRDKAFKA_LOG, PLAIN_JAAS, STANDARD_AUTHORIZER, confluent, kafka_python
from kafka_course.wiretap import WireTap


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("certs"))


def deliver(config: dict, topic: str, value: bytes = b"hello") -> KafkaError | None:
    producer, results = Producer({"logger": LIBRDKAFKA_LOG, **config}), []
    producer.produce(topic, value, on_delivery=lambda err, msg: results.append(err))
    producer.flush(10)
    assert results, "no delivery report"
    return results[0]


def test_ssl_listener_with_both_clients(make_cluster, certs, topic_name):
    cluster = make_cluster(config={"listeners": "SSL://127.0.0.1:0", **certs.broker_settings()}, in_memory=True)
    assert deliver({"bootstrap.servers": cluster.bootstrap_servers, **certs.client_settings()}, topic_name) is None
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, security_protocol="SSL",
                             ssl_cafile=str(certs.ca_certificate))
    assert producer.send(topic_name, b"again").get(10).offset == 1
    producer.close()
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, **certs.client_settings(),
                         "logger": LIBRDKAFKA_LOG, "group.id": "g", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic_name])
    values, deadline = [], time.monotonic() + 15
    while len(values) < 2 and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            values.append(msg.value())
    consumer.close()
    assert values == [b"hello", b"again"]


def test_a_client_that_does_not_trust_the_ca_cannot_connect(make_cluster, certs, tmp_path, topic_name):
    cluster = make_cluster(config={"listeners": "SSL://127.0.0.1:0", **certs.broker_settings()}, in_memory=True)
    stranger = make_certificates(tmp_path / "other-ca")  # a CA the broker's certificate does not come from
    errors: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, **stranger.client_settings(),
                         "error_cb": errors.append, "logger": LIBRDKAFKA_LOG})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    assert errors and "certificate verify failed" in errors[0].str()


def test_sasl_inside_tls(make_cluster, certs, topic_name):
    cluster = make_cluster(config={"listeners": "SASL_SSL://127.0.0.1:0", **certs.broker_settings(),
                                   "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                                   "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS}, in_memory=True)
    cluster.add_scram_user("carol", "carol-secret", "SCRAM-SHA-512")
    config = confluent(cluster.bootstrap_servers, "carol", "carol-secret", "SCRAM-SHA-512", "SASL_SSL",
                       **{"ssl.ca.location": str(certs.ca_certificate)})
    assert deliver(config, topic_name) is None
    producer = KafkaProducer(**kafka_python(cluster.bootstrap_servers, "alice", "alice-secret", "PLAIN", "SASL_SSL",
                                            ssl_cafile=str(certs.ca_certificate)))
    assert producer.send(topic_name, b"x").get(10).offset == 1
    producer.close()


def test_a_client_certificate_names_the_principal_the_acls_see(make_cluster, certs, topic_name):
    cluster = make_cluster(config={"listeners": "SSL://127.0.0.1:0", **certs.broker_settings(),
                                   "ssl.client.auth": "required", "ssl.truststore.type": "PEM",
                                   "ssl.truststore.location": str(certs.ca_certificate),
                                   "authorizer.class.name": STANDARD_AUTHORIZER,
                                   "super.users": "User:CN=admin,O=Kafka Hands-On"}, in_memory=True)
    cluster.create_topic(topic_name)

    def client(name: str) -> dict:
        cert, key = certs.client_certificate(name)
        return {"bootstrap.servers": cluster.bootstrap_servers, **certs.client_settings(),
                "ssl.certificate.location": str(cert), "ssl.key.location": str(key), "message.timeout.ms": 5000}
    assert deliver(client("admin"), topic_name) is None  # the super user, by its certificate's subject
    assert deliver(client("alice"), topic_name).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL"])
def test_the_record_value_is_readable_on_the_wire_only_without_tls(make_cluster, certs, topic_name, protocol):
    secret = b"card-number-4111-1111-1111-1111"
    with WireTap() as tap:
        tls = certs.broker_settings() if protocol == "SSL" else {}
        cluster = make_cluster(config={"listeners": f"{protocol}://127.0.0.1:0", **tls,
                                       "advertised.listeners": f"{protocol}://{tap.address}"}, in_memory=True)
        tap.forward_to(cluster.bootstrap_servers)  # clients reach the broker only through the tap
        client = certs.client_settings() if protocol == "SSL" else {}
        assert deliver({"bootstrap.servers": tap.address, **client}, topic_name, secret) is None
        seen = tap.seen()
    if protocol == "PLAINTEXT":
        assert secret in seen and topic_name.encode() in seen  # anyone on the path reads them
    else:
        assert secret not in seen and topic_name.encode() not in seen
        assert seen[:1] == b"\x16"  # a TLS handshake record: everything after it is encrypted
