"""Kafka's security settings: off by default, and a wrong one refused at start with a
sentence naming it (the embedded Cluster and ``minikafka serve`` alike)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from minikafka import Cluster
from minikafka.config import ConfigError
from minikafka.security.settings import split

PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
SASL = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS}


def test_security_is_off_by_default():
    security, rest = split({"num.partitions": 3})
    assert not security.active and security.authorizer is None and rest == {"num.partitions": 3}


def test_kafkas_settings_are_read():
    security, rest = split({**SASL, "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                            "super.users": "User:admin;User:ops", "allow.everyone.if.no.acl.found": "true",
                            "num.partitions": 2})
    assert [(lst.name, lst.protocol, lst.mechanisms) for lst in security.listeners] == [
        ("PLAINTEXT", "PLAINTEXT", ()), ("SASL_PLAINTEXT", "SASL_PLAINTEXT", ("PLAIN",))]
    assert security.listeners[1].plain_users == {"alice": "alice-secret"}
    assert security.super_users == {"User:admin", "User:ops"} and security.allow_everyone_if_no_acl
    assert security.active and rest == {"num.partitions": 2}


@pytest.mark.parametrize("settings, named", [
    ({**SASL, "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-1"}, "sasl.enabled.mechanisms"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, "sasl.enabled.mechanisms=GSSAPI"),
    ({"listeners": "CLIENT://127.0.0.1:0"}, "listener.security.protocol.map"),
    ({"listeners": "CLIENT://127.0.0.1:0", "listener.security.protocol.map": "CLIENT:TLS"},
     "listener.security.protocol.map"),
    ({"listeners": "PLAINTEXT:9092"}, "listeners"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN"},
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({**SASL, "listener.name.sasl_plaintext.plain.sasl.jaas.config": "PlainLoginModule required;"},
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({**SASL, "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS.rstrip(";")},
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/no/such.pem"},
     "ssl.keystore.location"),
    ({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.location": "/etc/kafka/broker.jks"}, "ssl.keystore.type"),
    ({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PEM"}, "ssl.keystore.location"),
    ({"authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer"}, "authorizer.class.name"),
    ({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users": "admin"},
     "super.users"),
    ({"allow.everyone.if.no.acl.found": "maybe"}, "allow.everyone.if.no.acl.found"),
    ({"sasl.jaas.config": PLAIN_JAAS}, "sasl.jaas.config"),
    ({**SASL, "listener.name.external.sasl.enabled.mechanisms": "PLAIN"}, "listener.name.external"),
    ({"ssl.keystore.filename": "x"}, "ssl.keystore.filename"),
])
def test_a_bad_setting_is_refused_with_a_sentence_naming_it(settings, named):
    with pytest.raises(ConfigError) as refused:
        Cluster(config=settings)
    assert named in str(refused.value)


def test_a_key_password_that_does_not_decrypt_the_key_is_named(tmp_path):
    from kafka_course.certificates import make_certificates
    certs = make_certificates(tmp_path, key_password="right")
    settings = {"listeners": "SSL://127.0.0.1:0", **certs.broker_settings(), "ssl.key.password": "wrong"}
    with pytest.raises(ConfigError, match=re.escape("ssl.key.password")):
        Cluster(config=settings)


def test_serve_refuses_a_bad_setting_with_the_sentence_and_no_traceback(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0\n"
                     "sasl.enabled.mechanisms=PLAIN,OAUTHBEARER\n")
    r = subprocess.run([sys.executable, "-m", "minikafka.cli.main", "serve", str(props), "--in-memory"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "sasl.enabled.mechanisms: 'OAUTHBEARER' is not a SASL mechanism minikafka has" in r.stderr


def test_an_encrypted_key_without_its_password_is_named_not_prompted_for(tmp_path):
    from kafka_course.certificates import make_certificates
    certs = make_certificates(tmp_path, key_password="right")
    settings = {"listeners": "SSL://127.0.0.1:0", **certs.broker_settings()}
    del settings["ssl.key.password"]
    with pytest.raises(ConfigError, match=re.escape("encrypted: set ssl.key.password")):
        Cluster(config=settings)
