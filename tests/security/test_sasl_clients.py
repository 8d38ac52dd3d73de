"""SASL/PLAIN and SASL/SCRAM with the real clients (KIP-43, KIP-84, KIP-152, KIP-554).

Users log in over SASL_PLAINTEXT with confluent-kafka and kafka-python; SCRAM users are
made with confluent's AdminClient.alter_user_scram_credentials. A wrong password, an
unknown user and an unsupported mechanism get Kafka's errors and nothing else, and the
broker closes a connection that tries anything before authenticating.
"""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion, \
    UserScramCredentialUpsertion
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaTimeoutError
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from tests.rawclient import RawClient

from .conftest import LIBRDKAFKA_LOG, confluent, first_error, kafka_python, produce_one, sasl_settings

GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism"


class _Producer(Producer):
    def __init__(self, config):
        self.errors: list[KafkaError] = []
        super().__init__({**config, "error_cb": self.errors.append})


def sasl(cluster) -> str:
    return cluster.bootstrap_servers_of("SASL_PLAINTEXT")


def test_plain_users_log_in_with_both_clients(sasl_cluster, topic_name):
    assert produce_one(confluent(sasl(sasl_cluster), "alice", "alice-secret"), topic_name) == 0
    producer = KafkaProducer(**kafka_python(sasl(sasl_cluster), "bob", "bob-secret"))
    assert producer.send(topic_name, b"again").get(10).offset == 1
    producer.close()
    consumer = KafkaConsumer(topic_name, **kafka_python(sasl(sasl_cluster), "alice", "alice-secret"),
                             auto_offset_reset="earliest", consumer_timeout_ms=10000, group_id="g")
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == 2:
            break
    consumer.close()
    assert values == [b"hello", b"again"]


@pytest.mark.parametrize("mechanism", [ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512])
def test_scram_users_made_by_the_admin_client_log_in(sasl_cluster, topic_name, mechanism):
    name = "SCRAM-SHA-256" if mechanism == ScramMechanism.SCRAM_SHA_256 else "SCRAM-SHA-512"
    admin = AdminClient({"bootstrap.servers": sasl_cluster.bootstrap_servers, "logger": LIBRDKAFKA_LOG})
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("carol", ScramCredentialInfo(mechanism, 8192), b"carol-secret")])
    futures["carol"].result(10)
    described = admin.describe_user_scram_credentials(["carol"])["carol"].result(10)
    assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [(mechanism, 8192)]
    assert produce_one(confluent(sasl(sasl_cluster), "carol", "carol-secret", name), topic_name) == 0
    producer = KafkaProducer(**kafka_python(sasl(sasl_cluster), "carol", "carol-secret", name))
    assert producer.send(topic_name, b"x").get(10).offset == 1
    producer.close()


def test_a_wrong_password_or_unknown_user_gets_sasl_authentication_failed(sasl_cluster, topic_name):
    sasl_cluster.add_scram_user("dave", "dave-secret", "SCRAM-SHA-512")
    cases = [("alice", "wrong", "PLAIN", "Authentication failed: Invalid username or password"),
             ("mallory", "alice-secret", "PLAIN", "Authentication failed: Invalid username or password"),
             ("dave", "wrong", "SCRAM-SHA-512", f"{GENERIC} SCRAM-SHA-512"),
             ("nobody", "x", "SCRAM-SHA-256", f"{GENERIC} SCRAM-SHA-256")]
    for user, password, mechanism, sentence in cases:
        producer = _Producer(confluent(sasl(sasl_cluster), user, password, mechanism))
        error = first_error(producer)
        assert error.code() == KafkaError._AUTHENTICATION and sentence in error.str(), (user, error)


def test_kafka_python_sees_the_same_failure(sasl_cluster, caplog):
    caplog.set_level(logging.WARNING, logger="kafka")
    with pytest.raises(KafkaTimeoutError):
        KafkaProducer(**kafka_python(sasl(sasl_cluster), "alice", "wrong"), bootstrap_timeout_ms=1500)
    assert "Authentication failed: Invalid username or password" in caplog.text


def test_an_unsupported_mechanism_gets_unsupported_sasl_mechanism(make_cluster):
    cluster = make_cluster(config=sasl_settings(mechanisms="PLAIN"), in_memory=True)
    producer = _Producer(confluent(sasl(cluster), "alice", "alice-secret", "SCRAM-SHA-256"))
    error = first_error(producer)
    assert "SCRAM-SHA-256" in error.str() and "PLAIN" in error.str(), error  # the broker's list reached the client
    with RawClient(sasl(cluster)) as raw:
        answer = raw.request(SaslHandshakeRequest(mechanism="GSSAPI"))
        assert answer.error_code == 33 and answer.mechanisms == ("PLAIN",)  # UNSUPPORTED_SASL_MECHANISM
        with pytest.raises(ConnectionError):
            raw.recv_frame()  # and the connection is closed


def test_nothing_but_the_handshake_is_answered_before_authentication(sasl_cluster):
    metadata = MetadataRequest(topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    with RawClient(sasl(sasl_cluster)) as raw:
        raw.send_frame(raw.encode(metadata, 3, 12))
        with pytest.raises(ConnectionError):
            raw.recv_frame()  # closed without an answer
    with RawClient(sasl(sasl_cluster)) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
        assert raw.request(metadata).brokers == ()  # ILLEGAL_SASL_STATE's answer carries nothing ...
        with pytest.raises(ConnectionError):
            raw.recv_frame()  # ... and the connection closes


def test_a_wrong_password_is_answered_once_then_the_connection_closes(sasl_cluster):
    with RawClient(sasl(sasl_cluster)) as raw:
        raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        answer = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0alice\0wrong"))
        assert answer.error_code == 58 and answer.error_message == "Authentication failed: Invalid username or password"
        with pytest.raises(ConnectionError):
            raw.recv_frame()
    with RawClient(sasl(sasl_cluster)) as raw:  # a right one goes on to any request
        raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert raw.request(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret")).error_code == 0
        metadata = MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                   include_topic_authorized_operations=False)
        assert len(raw.request(metadata).brokers) == 1


def test_sasl_requests_on_a_plaintext_listener_get_illegal_sasl_state(sasl_cluster):
    with RawClient(sasl_cluster.bootstrap_servers) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 34  # ILLEGAL_SASL_STATE
        assert raw.request(SaslAuthenticateRequest(auth_bytes=b"\0a\0b")).error_code == 34


def test_metadata_names_the_brokers_on_the_clients_own_listener(sasl_cluster):
    with RawClient(sasl(sasl_cluster)) as raw:
        raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        raw.request(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret"))
        metadata = MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                   include_topic_authorized_operations=False)
        broker = raw.request(metadata).brokers[0]
    assert f"{broker.host}:{broker.port}" == sasl(sasl_cluster) != sasl_cluster.bootstrap_servers


def test_scram_credentials_are_validated_deleted_and_survive_a_restart(make_cluster, topic_name):
    cluster = make_cluster(config=sasl_settings())  # persistent: the credentials are cluster metadata
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "logger": LIBRDKAFKA_LOG})
    sha256, sha512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("erin", ScramCredentialInfo(sha256, 4096), b"erin-secret"),
        UserScramCredentialUpsertion("weak", ScramCredentialInfo(sha256, 1024), b"weak-secret")])
    futures["erin"].result(10)
    with pytest.raises(Exception, match="Too few iterations"):
        futures["weak"].result(10)
    with pytest.raises(Exception, match="does not exist"):
        admin.alter_user_scram_credentials([UserScramCredentialDeletion("erin", sha512)])["erin"].result(10)
    cluster.restart()
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "logger": LIBRDKAFKA_LOG})
    assert list(admin.describe_user_scram_credentials().result(10)) == ["erin"]
    assert produce_one(confluent(sasl(cluster), "erin", "erin-secret", "SCRAM-SHA-256"), topic_name) == 0
    admin.alter_user_scram_credentials([UserScramCredentialDeletion("erin", sha256)])["erin"].result(10)
    producer = _Producer(confluent(sasl(cluster), "erin", "erin-secret", "SCRAM-SHA-256"))
    assert first_error(producer).code() == KafkaError._AUTHENTICATION


def test_every_broker_of_a_cluster_has_each_listener(make_cluster, topic_name):
    cluster = make_cluster(brokers=3, config=sasl_settings(), in_memory=True)
    cluster.create_topic(topic_name, partitions=3, replication_factor=3)
    addresses = sasl(cluster).split(",")
    assert len(addresses) == 3 and not set(addresses) & set(cluster.bootstrap_servers.split(","))
    config = confluent(addresses[0], "alice", "alice-secret", acks="all")
    producer, results = Producer(config), []
    for partition in range(3):  # one leader per broker: a connection to each, over SASL
        producer.produce(topic_name, b"v", partition=partition, on_delivery=lambda err, msg: results.append(err))
    producer.flush(10)
    assert results == [None, None, None]
