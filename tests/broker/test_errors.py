"""Every error the broker core promises reaches a real client as Kafka's error code."""

from __future__ import annotations

import struct

import pytest
from confluent_kafka import KafkaError as CKError
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from minikafka import records
from tests.rawclient import RawClient


_admins: dict[str, AdminClient] = {}


@pytest.fixture(autouse=True)
def _admin_clients_end_with_the_test():
    """A confluent AdminClient must outlive the futures it returns, but not its cluster: one
    kept after the test goes on reconnecting to a stopped broker and holds its descriptors."""
    yield
    _admins.clear()


def admin(bootstrap):
    """One client per cluster, for the length of one test."""
    if bootstrap not in _admins:
        _admins[bootstrap] = AdminClient({"bootstrap.servers": bootstrap})
    return _admins[bootstrap]


def create_error(bootstrap, *topics) -> int:
    fut = next(iter(admin(bootstrap).create_topics(list(topics)).values()))
    with pytest.raises(KafkaException) as info:
        fut.result(10)
    return info.value.args[0].code()


def test_unknown_topic_when_auto_create_is_off(make_cluster):
    cluster = make_cluster(config={"auto.create.topics.enable": "false"})
    from kafka import KafkaConsumer
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    assert not c.partitions_for_topic("nope")  # Metadata answered UNKNOWN_TOPIC_OR_PARTITION
    c.close()
    from kio.schema.metadata.v8.request import MetadataRequest, MetadataRequestTopic
    with RawClient(cluster.bootstrap_servers) as raw:
        resp = raw.request(MetadataRequest(topics=(MetadataRequestTopic(name="nope"),), allow_auto_topic_creation=True,
                                           include_cluster_authorized_operations=False,
                                           include_topic_authorized_operations=False))
    assert resp.topics[0].error_code == CKError.UNKNOWN_TOPIC_OR_PART


def test_message_too_large(bootstrap, topic_name):
    admin(bootstrap).create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 5_000_000, "compression.type": "none"})
    p.produce(topic_name, b"x" * 2_000_000, on_delivery=lambda err, m: errors.append(err))
    p.flush(10)
    assert errors and errors[0].code() == CKError.MSG_SIZE_TOO_LARGE


def test_message_too_large_honours_topic_setting(bootstrap, topic_name):
    admin(bootstrap).create_topics([NewTopic(topic_name, 1, 1,
                                             config={"max.message.bytes": "2000"})])[topic_name].result(10)
    errors = []
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic_name, b"y" * 5000, on_delivery=lambda err, m: errors.append(err))
    p.flush(10)  # separate batches: a too-large batch is refused whole
    p.produce(topic_name, b"small", on_delivery=lambda err, m: errors.append(err))
    p.flush(10)
    assert errors[0].code() == CKError.MSG_SIZE_TOO_LARGE and errors[1] is None


def _produce_raw(bootstrap, topic, batch: bytes):
    from kio.schema.produce.v7.request import PartitionProduceData, ProduceRequest, TopicProduceData
    import datetime
    req = ProduceRequest(transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=5),
                         topic_data=(TopicProduceData(name=topic, partition_data=(
                             PartitionProduceData(index=0, records=batch),)),))
    with RawClient(bootstrap) as raw:
        return raw.request(req).responses[0].partition_responses[0]


def test_corrupt_batch_is_refused_and_nothing_is_written(cluster, bootstrap, topic_name):
    cluster.create_topic(topic_name)
    batch = bytearray(records.build_batch([records.Record(0, 1000, b"k", b"v")]))
    batch[-1] ^= 0xFF  # flip a bit the CRC covers
    resp = _produce_raw(bootstrap, topic_name, bytes(batch))
    assert resp.error_code == CKError.INVALID_MSG  # CORRUPT_MESSAGE (2)
    assert cluster.partition_offsets(topic_name)[0]["log_end_offset"] == 0
    good = _produce_raw(bootstrap, topic_name, records.build_batch([records.Record(0, 1000, b"k", b"v")]))
    assert good.error_code == 0 and good.base_offset == 0


@pytest.mark.parametrize("name", [".", "..", "has space", "slash/no", "x" * 250, "ümlaut"])
def test_invalid_topic_names(bootstrap, name):
    assert create_error(bootstrap, NewTopic(name, 1, 1)) == CKError.TOPIC_EXCEPTION


def test_dot_underscore_collision(bootstrap):
    admin(bootstrap).create_topics([NewTopic("sales.eu", 1, 1)])["sales.eu"].result(10)
    assert create_error(bootstrap, NewTopic("sales_eu", 1, 1)) == CKError.TOPIC_EXCEPTION


def test_topic_already_exists(bootstrap, topic_name):
    admin(bootstrap).create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    assert create_error(bootstrap, NewTopic(topic_name, 1, 1)) == CKError.TOPIC_ALREADY_EXISTS


def test_invalid_partitions(bootstrap, topic_name):
    assert create_error(bootstrap, NewTopic(topic_name, 0, 1)) == CKError.INVALID_PARTITIONS
    admin(bootstrap).create_topics([NewTopic(topic_name, 3, 1)])[topic_name].result(10)
    fut = admin(bootstrap).create_partitions([NewPartitions(topic_name, 2)])[topic_name]
    with pytest.raises(KafkaException) as info:
        fut.result(10)
    assert info.value.args[0].code() == CKError.INVALID_PARTITIONS


def test_replication_factor_above_broker_count(bootstrap, topic_name):
    assert create_error(bootstrap, NewTopic(topic_name, 1, 3)) == CKError.INVALID_REPLICATION_FACTOR


def test_offset_out_of_range(bootstrap, topic_name):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import OffsetOutOfRangeError
    p = KafkaProducer(bootstrap_servers=bootstrap)
    p.send(topic_name, b"only one").get(10)
    p.close()
    c = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="none", enable_auto_commit=False)
    tp = TopicPartition(topic_name, 0)
    c.assign([tp])
    c.seek(tp, 1000)
    with pytest.raises(OffsetOutOfRangeError):
        for _ in range(20):
            c.poll(timeout_ms=200)
    c.close()


def test_unsupported_api_versions_version_gets_v0_body_with_ranges(bootstrap):
    with RawClient(bootstrap) as raw:
        raw.send_frame(struct.pack(">hhih", 18, 99, 7, 3) + b"raw" + b"\0\0\0")
        frame = raw.recv_frame()
    corr, error, count = struct.unpack_from(">ihi", frame, 0)
    assert corr == 7 and error == 35 and count > 10
    ranges = {struct.unpack_from(">hhh", frame, 10 + 6 * i)[0]: struct.unpack_from(">hhh", frame, 10 + 6 * i)[1:]
              for i in range(count)}
    # Produce listed from v0 as Kafka 4 lists it (older librdkafka checks v0 for compression, KAFKA-18659,
    # and v3 for record batches), Fetch from v4: what older librdkafka checks.
    assert ranges[0][0] == 0 and ranges[1][0] == 4


def test_unsupported_version_of_another_api_closes_only_that_connection(bootstrap):
    with RawClient(bootstrap) as raw:
        raw.send_frame(struct.pack(">hhih", 0, 99, 1, 0))
        with pytest.raises((ConnectionError, OSError)):
            raw.recv_frame()
    from kafka import KafkaAdminClient
    assert "x" not in KafkaAdminClient(bootstrap_servers=bootstrap).list_topics()


def test_a_full_disk_answers_kafka_storage_error_and_loses_nothing(tmp_path):
    """The disk refuses writes past a size (RLIMIT_FSIZE stands in for a full disk: the
    write fails with EFBIG as it would with ENOSPC). Produce gets KAFKA_STORAGE_ERROR,
    the connection stays open, and every acknowledged record is still readable."""
    import resource
    import signal
    import subprocess
    import sys

    from confluent_kafka import Consumer

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli.main", "serve", "--port", "0", "--data-dir",
                             str(tmp_path), "--log-level", "CRITICAL"], stdout=subprocess.PIPE, text=True,
                            preexec_fn=small_disk)
    try:
        address = proc.stdout.readline().split("listening on ")[1].split()[0]
        client = AdminClient({"bootstrap.servers": address})
        client.create_topics([NewTopic("full", 1, 1)])["full"].result(30)
        acked, errors = [], []
        p = Producer({"bootstrap.servers": address, "linger.ms": 0, "retries": 0, "acks": "all"})
        for i in range(40):
            p.produce("full", value=b"%04d" % i + b"x" * 9_996,
                      on_delivery=lambda err, m: acked.append(m.value()[:4]) if err is None else errors.append(err))
            p.flush(10)
        assert acked and errors, (len(acked), len(errors))
        assert {e.code() for e in errors} == {CKError.KAFKA_STORAGE_ERROR}
        assert proc.poll() is None  # the broker is still running
        c = Consumer({"bootstrap.servers": address, "group.id": "check", "auto.offset.reset": "earliest"})
        c.subscribe(["full"])
        got = []
        for _ in range(100):
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value()[:4])
            if len(got) >= len(acked):
                break
        c.close()
        assert got == acked  # all acknowledged, in order, nothing half-written
    finally:
        proc.terminate()
        proc.wait(10)
