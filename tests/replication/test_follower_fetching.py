"""Fetch from the closest replica (KIP-392): racks, the rack-aware selector, followers serving consumers.

Three brokers in racks a, b and c, every partition on all three, led by broker 1 (rack
a). A confluent-kafka consumer with ``client.rack=c`` is sent to broker 3 by the
leader's ``preferred_read_replica`` and reads every record there: the brokers' request
counts show who answered its fetches. Without the selector (Kafka's default) the
leader serves everything; a follower never serves past its own high watermark.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.replica.selector import RACK_AWARE
from tests.groups.helpers import wait_until
from tests.rawclient import RawClient

pytestmark = pytest.mark.timeout(60)

RACKS = ["a", "b", "c"]


def racked(make_cluster, **config):
    cluster = make_cluster(brokers=3, racks=RACKS, config=config)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    assert cluster.partition_state("t")["leader"] == 1
    return cluster


def produce(cluster, count: int, prefix: str = "m") -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(count):
        producer.produce("t", f"{prefix}-{i}".encode())
    assert producer.flush(15) == 0


def consume(cluster, count: int, client_id: str, rack: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": client_id,
                         "client.id": client_id, "client.rack": rack, "auto.offset.reset": "earliest",
                         "fetch.wait.max.ms": 100})
    consumer.subscribe(["t"])
    got: list[bytes] = []
    try:
        wait_until(lambda: _poll(consumer, got) >= count, 20, f"{count} records")
    finally:
        consumer.close()
    return got


def _poll(consumer, got: list) -> int:
    msg = consumer.poll(0.1)
    if msg is not None and not msg.error():
        got.append(msg.value())
    return len(got)


def test_brokers_report_their_racks_in_metadata_and_describe_cluster(make_cluster):
    cluster = make_cluster(brokers=3, racks=RACKS)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    nodes = admin.describe_cluster().result(15).nodes
    assert {n.id: n.rack for n in nodes} == {1: "a", 2: "b", 3: "c"}


def test_a_consumer_in_rack_c_reads_from_the_follower_in_rack_c(make_cluster):
    cluster = racked(make_cluster, **{"replica.selector.class": RACK_AWARE})
    produce(cluster, 30)
    got = consume(cluster, 30, "reader-c", "c")
    assert sorted(got) == sorted(f"m-{i}".encode() for i in range(30))
    fetches = {b: cluster.request_counts(b, "Fetch").get("reader-c", 0) for b in (1, 2, 3)}
    assert fetches[2] == 0 and fetches[3] >= 1, fetches
    assert fetches[1] <= 2, f"the leader only pointed the consumer elsewhere: {fetches}"


def test_without_the_selector_the_leader_serves_every_fetch(make_cluster):
    cluster = racked(make_cluster)
    produce(cluster, 10)
    consume(cluster, 10, "reader-default", "c")
    fetches = {b: cluster.request_counts(b, "Fetch").get("reader-default", 0) for b in (1, 2, 3)}
    assert fetches[1] >= 1 and fetches[2] == fetches[3] == 0, fetches


def fetch_request(topic_id: str, version: int, rack: str = ""):
    module = codec.request_module(1, version)
    partition = codec.entity(module, "FetchPartition", partition=0, current_leader_epoch=-1, fetch_offset=0,
                             log_start_offset=-1, partition_max_bytes=1 << 20)
    topic = codec.entity(module, "FetchTopic", topic="t", topic_id=uuid.UUID(topic_id), partitions=(partition,))
    return codec.downgrade(codec.request_class(1, version), replica_id=-1, max_wait=datetime.timedelta(0),
                           min_bytes=0, max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                           topics=(topic,), forgotten_topics_data=(), rack_id=rack)


def test_the_leader_names_the_preferred_replica_and_a_follower_serves_up_to_its_high_watermark(make_cluster):
    cluster = racked(make_cluster, **{"replica.selector.class": RACK_AWARE})
    produce(cluster, 5)
    topic_id = cluster.metadata.topics["t"].topic_id
    leader = f"127.0.0.1:{cluster.ports[1]}"
    follower = f"127.0.0.1:{cluster.ports[3]}"
    with RawClient(leader) as raw:
        answer = raw.request(fetch_request(topic_id, 11, rack="c")).responses[0].partitions[0]
        assert answer.preferred_read_replica == 3 and not answer.records, "no records, only where to go"
        same_rack = raw.request(fetch_request(topic_id, 11, rack="a")).responses[0].partitions[0]
        assert same_rack.preferred_read_replica == -1 and same_rack.records
    wait_until(lambda: cluster.call(lambda: cluster.broker(3).partitions[("t", 0)].high_watermark) == 5, 10,
               "the follower's high watermark")
    with RawClient(follower) as raw:
        served = raw.request(fetch_request(topic_id, 11, rack="c")).responses[0].partitions[0]
        assert served.error_code == 0 and served.high_watermark == 5 and served.records
        old = raw.request(fetch_request(topic_id, 10)).responses[0].partitions[0]
        assert old.error_code == ErrorCode.not_leader_or_follower, "before v11 consumers fetch from leaders"


def test_minikafka_serve_takes_broker_rack_from_server_properties(tmp_path):
    import os
    import subprocess
    import sys
    properties = tmp_path / "server.properties"
    properties.write_text("listeners=PLAINTEXT://127.0.0.1:0\nbroker.rack=eu-west-1a\n")
    command = [sys.executable, "-m", "minikafka.cli.main", "serve", str(properties), "--in-memory"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = proc.stdout.readline()
        address = line.split("listening on ")[1].split()[0]
        admin = AdminClient({"bootstrap.servers": address})
        nodes = admin.describe_cluster().result(15).nodes
        assert [n.rack for n in nodes] == ["eu-west-1a"]
    finally:
        proc.terminate()
        proc.wait(10)
    wrong = subprocess.run([*command, "--brokers", "2", "--config", "broker.rack=a,b,c"], capture_output=True,
                           text=True, timeout=30)
    assert wrong.returncode == 2 and "2 broker(s) need 2 rack(s)" in wrong.stderr and "Traceback" not in wrong.stderr
