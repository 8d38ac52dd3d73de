"""``minikafka acls`` and ``--command-config``: Kafka's script, its flags, against a secured minikafka.

The admin logs in with a properties file written as Kafka's tools take it (a JAAS line,
Java names); what the tool adds is then enforced on alice's real clients, what it
removes stops working, and a bad file or flag is a sentence.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from kafka_course.tools import acls
from kafka_course.tools.client_config import parse_properties, translate
from minikafka.config import ConfigError
from tests.security.conftest import PLAIN_JAAS, STANDARD_AUTHORIZER, confluent

ADMIN_PROPERTIES = """\
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username="admin" password="admin-secret";
"""


@pytest.fixture
def secured(make_cluster, tmp_path):
    cluster = make_cluster(config={"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
                                   "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
                                   "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin"},
                           in_memory=True)
    cluster.create_topic("orders", partitions=1)
    cluster.create_topic("payments", partitions=1)
    properties = tmp_path / "admin.properties"
    properties.write_text(ADMIN_PROPERTIES)
    return cluster.bootstrap_servers, str(properties)


def run(capsys, *args) -> tuple[int, str, str]:
    code = acls.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def delivered(bootstrap: str, topic: str) -> str:
    """'stored' or the error name alice's producer gets for one record."""
    producer, results = Producer(confluent(bootstrap, "alice", "alice-secret", **{"message.timeout.ms": 5000})), []
    producer.produce(topic, b"hi", on_delivery=lambda err, msg: results.append(err))
    producer.flush(10)
    return "stored" if results and results[0] is None else (results[0].name() if results else "no answer")


def test_acls_added_with_the_producer_shortcut_are_enforced_listed_and_removed(secured, capsys):
    bootstrap, admin_login = secured
    common = ["--bootstrap-server", bootstrap, "--command-config", admin_login]
    assert delivered(bootstrap, "orders") == "TOPIC_AUTHORIZATION_FAILED"
    code, out, _ = run(capsys, *common, "--add", "--allow-principal", "User:alice", "--producer", "--topic", "orders",
                       "--idempotent")
    assert code == 0 and "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders" in out
    assert "operation=WRITE" in out and "operation=IDEMPOTENT_WRITE" in out
    assert delivered(bootstrap, "orders") == "stored"
    assert delivered(bootstrap, "payments") == "TOPIC_AUTHORIZATION_FAILED", "only orders was granted"

    code, out, _ = run(capsys, *common, "--list", "--topic", "orders")
    assert code == 0 and out.count("principal=User:alice") == 3  # WRITE, DESCRIBE, CREATE on the topic

    code, out, _ = run(capsys, *common, "--remove", "--allow-principal", "User:alice", "--operation", "Write",
                       "--topic", "orders", "--force")
    assert code == 0 and "Removed ACLs" in out and "operation=WRITE" in out
    assert delivered(bootstrap, "orders") == "TOPIC_AUTHORIZATION_FAILED"


def test_prefixed_patterns_and_deny_win(secured, capsys):
    bootstrap, admin_login = secured
    common = ["--bootstrap-server", bootstrap, "--command-config", admin_login]
    assert run(capsys, *common, "--add", "--allow-principal", "User:alice", "--operation", "Write", "--operation",
               "Describe", "--topic", "pay", "--resource-pattern-type", "prefixed")[0] == 0
    assert delivered(bootstrap, "payments") == "stored"
    assert run(capsys, *common, "--add", "--deny-principal", "User:alice", "--operation", "Write",
               "--topic", "payments")[0] == 0
    assert delivered(bootstrap, "payments") == "TOPIC_AUTHORIZATION_FAILED", "a DENY wins over an ALLOW"


def test_mistakes_are_sentences(secured, capsys, tmp_path):
    bootstrap, admin_login = secured
    common = ["--bootstrap-server", bootstrap, "--command-config", admin_login]
    code, _, err = run(capsys, *common, "--add", "--allow-principal", "alice", "--topic", "orders")
    assert code == 1 and "write it as User:name" in err
    code, _, err = run(capsys, *common, "--add", "--allow-principal", "User:alice", "--operation", "Fly",
                       "--topic", "orders")
    assert code == 1 and "'Fly' is not an operation" in err
    code, _, err = run(capsys, *common, "--add", "--allow-principal", "User:bob", "--consumer", "--topic", "orders")
    assert code == 1 and "--group" in err
    wrong = tmp_path / "alice.properties"
    wrong.write_text(ADMIN_PROPERTIES.replace('username="admin" password="admin-secret"',
                                              'username="alice" password="alice-secret"'))
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, "--command-config", str(wrong), "--add",
                       "--allow-principal", "User:alice", "--operation", "All", "--topic", "orders")
    assert code == 1 and "cluster authorization failed" in err, "alice may not change ACLs"
    code, _, err = run(capsys, "--bootstrap-server", bootstrap, "--command-config", str(tmp_path / "missing"),
                       "--list")
    assert code == 2 and "Cannot read the --command-config file" in err


def test_command_config_translates_java_client_settings():
    pem = "ssl.truststore.type=PEM\nssl.truststore.location=/ca.pem\n"
    settings = translate(parse_properties(ADMIN_PROPERTIES + pem))
    assert settings == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "admin",
                        "sasl.password": "admin-secret", "ssl.ca.location": "/ca.pem"}
    with pytest.raises(ConfigError, match="PEM files only"):
        translate({"ssl.truststore.type": "JKS"})
    with pytest.raises(ConfigError, match="PlainLoginModule and ScramLoginModule"):
        translate({"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"})


def test_a_login_that_may_not_describe_the_cluster_cannot_list_acls(secured, capsys, tmp_path):
    """Kafka refuses DescribeAcls without Describe on the cluster; the tool must not print 'no ACLs' instead."""
    bootstrap, admin_login = secured
    run(capsys, "--bootstrap-server", bootstrap, "--command-config", admin_login, "--add", "--allow-principal",
        "User:alice", "--operation", "Read", "--topic", "orders")
    alice = tmp_path / "alice.properties"
    alice.write_text(ADMIN_PROPERTIES.replace('username="admin" password="admin-secret"',
                                              'username="alice" password="alice-secret"'))
    code, out, err = run(capsys, "--bootstrap-server", bootstrap, "--command-config", str(alice), "--list")
    assert code == 1 and out == "" and "CLUSTER_AUTHORIZATION_FAILED" in err and "Describe on the cluster" in err
    code, out, _ = run(capsys, "--bootstrap-server", bootstrap, "--command-config", admin_login, "--list")
    assert code == 0 and "principal=User:alice" in out
