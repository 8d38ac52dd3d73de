"""Secured clusters for the real clients: listener settings and client settings, by Kafka's names."""

from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import Producer

# librdkafka's own lines (a client still retrying after its test's cluster stopped) go to
# Python logging, where pytest keeps them with the test, instead of onto the terminal
LIBRDKAFKA_LOG = logging.getLogger("librdkafka")

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def sasl_settings(listener: str = "SASL_PLAINTEXT", mechanisms: str = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
                  **more) -> dict:
    """A PLAINTEXT listener first (bootstrap_servers) and a SASL one, with PLAIN users admin, alice, bob."""
    return {"listeners": f"PLAINTEXT://127.0.0.1:0,{listener}://127.0.0.1:0", "sasl.enabled.mechanisms": mechanisms,
            f"listener.name.{listener.lower()}.plain.sasl.jaas.config": PLAIN_JAAS, **more}


def acl_settings(**more) -> dict:
    """SASL only, the standard authorizer, admin as super user: nothing else is allowed by default."""
    return {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin", **more}


def confluent(bootstrap: str, user: str, password: str, mechanism: str = "PLAIN",
              protocol: str = "SASL_PLAINTEXT", **more) -> dict:
    return {"bootstrap.servers": bootstrap, "security.protocol": protocol, "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": password, "logger": LIBRDKAFKA_LOG, **more}


def kafka_python(bootstrap: str, user: str, password: str, mechanism: str = "PLAIN",
                 protocol: str = "SASL_PLAINTEXT", **more) -> dict:
    return {"bootstrap_servers": bootstrap, "security_protocol": protocol, "sasl_mechanism": mechanism,
            "sasl_plain_username": user, "sasl_plain_password": password, **more}


def produce_one(config: dict, topic: str) -> int:
    """Deliver one record with confluent-kafka; its offset."""
    producer, results = Producer(config), []
    producer.produce(topic, b"hello", on_delivery=lambda err, msg: results.append((err, msg)))
    producer.flush(10)
    assert results and results[0][0] is None, results
    return results[0][1].offset()


def first_error(client, seconds: float = 10):
    """Poll a confluent client until its error_cb saw an error (the config's 'errors' list)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not client.errors:
        client.poll(0.1)
    assert client.errors, "the client reported no error"
    return client.errors[0]


@pytest.fixture
def sasl_cluster(make_cluster):
    return make_cluster(config=sasl_settings(), in_memory=True)
