"""Broker-to-broker links in a process cluster: replication goes through its own proxies (``--peer``),
so cutting a leader from its followers shrinks the ISR while clients still reach every broker."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient

from minikafka.brokerproc.cli import parse_args, settings_from
from minikafka.config import BrokerConfig
from minikafka.metadata import ClusterMetadata
from minikafka.replica.sources import NetworkSource
from minikafka.transactions.channel import InProcessTxnPeers
from minikafka.transactions.network import NetworkTxnPeers
from minikafka.processes import ProcessCluster, wait_for

TOPIC = "cut-replication"


def test_each_broker_is_told_its_own_links_to_the_other_brokers(tmp_path):
    pc = ProcessCluster(brokers=3, controllers=1, data_dir=tmp_path, links=True)
    network = pc.open_links()  # the proxies only: no node is started
    assert network is not None
    try:
        settings = settings_from(parse_args(pc.command(1)[4:]))
        assert settings.peers == {b: tuple_of(network.address("b1", f"b{b}")) for b in (2, 3)}
        assert network.link("b1", "b2").target == ("127.0.0.1", pc.ports[2])
        assert settings.advertised == tuple_of(network.address("client", "b1"))
        assert network.address("b1", "b2") != network.address("client", "b2")
    finally:
        network.stop()
    plain = ProcessCluster(brokers=3, controllers=1, data_dir=tmp_path / "plain")
    assert not any(arg.startswith("--peer") for arg in plain.command(1))  # without links nothing changes
    assert settings_from(parse_args(plain.command(1)[4:])).peers == {}


def tuple_of(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def test_a_peer_option_that_is_not_id_equals_host_port_is_refused_with_a_sentence():
    args = parse_args(["--node-id", "1", "--listen", "127.0.0.1:0", "--controllers", "4@127.0.0.1:9", "--log-dir",
                       "/tmp/x", "--peer", "two=127.0.0.1:9"])
    with pytest.raises(ValueError, match=r"--peer must be id=host:port"):
        settings_from(args)


def isr_and_leader(bootstrap: str) -> tuple[int, list[int], list[int]]:
    topic = AdminClient({"bootstrap.servers": bootstrap}).list_topics(TOPIC, timeout=10).topics[TOPIC]
    partition = topic.partitions.get(0)  # none until the broker asked has the topic from the metadata log
    return (partition.leader, list(partition.replicas), sorted(partition.isrs)) if partition else (-1, [], [])


def write(bootstrap: str, acks: str, value: bytes) -> str:
    """One write with no retry: ``offset N`` or the error's name."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "retries": 0, "enable.idempotence": False,
                         "message.timeout.ms": 3000})
    outcome: list[str] = []
    producer.produce(TOPIC, value, on_delivery=lambda err, msg: outcome.append(
        err.name() if err else f"offset {msg.offset()}"))
    producer.flush(10)
    return outcome[0] if outcome else "no answer"


def high_watermark(bootstrap: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw-reader"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)[1]
    finally:
        consumer.close()


def test_replica_fetches_and_transaction_requests_dial_the_peer_address_and_the_registered_one_otherwise():
    metadata = ClusterMetadata(BrokerConfig({}), None)
    metadata.brokers = {2: ("127.0.0.1", 9002), 3: ("127.0.0.1", 9003)}  # what the brokers registered for clients
    peers = {2: ("127.0.0.1", 7002)}  # broker 2's inter-broker route
    config = metadata.broker_config(1)
    source = NetworkSource(metadata, config, peers)
    txn = NetworkTxnPeers(1, InProcessTxnPeers({}), metadata, config, peers)
    try:
        for channel in (source._channel(2), txn._channel(2, "markers")):
            assert (channel.host, channel.port) == ("127.0.0.1", 7002)
        for channel in (source._channel(3), txn._channel(3, "questions")):
            assert (channel.host, channel.port) == ("127.0.0.1", 9003)
        with pytest.raises(ConnectionError, match="broker 4 has no address"):
            source._channel(4)
    finally:
        source.close()


def test_a_leader_cut_from_its_followers_shrinks_the_isr_refuses_acks_all_and_holds_the_high_watermark(tmp_path):
    config = {"replica.lag.time.max.ms": 1500, "min.insync.replicas": 2}
    with ProcessCluster(brokers=3, controllers=1, data_dir=tmp_path, links=True, config=config) as pc:
        assert pc.network is not None
        admin = AdminClient({"bootstrap.servers": pc.bootstrap_servers})
        admin.create_topics([NewTopic(TOPIC, 1, 3, config={"min.insync.replicas": "2"})])[TOPIC].result(30)
        wait_for("every replica in sync", lambda: len(isr_and_leader(pc.bootstrap_servers)[2]) == 3, 30)
        leader, replicas, _ = isr_and_leader(pc.bootstrap_servers)
        followers = [r for r in replicas if r != leader]
        at_follower = pc.bootstrap([followers[0]])
        assert write(pc.bootstrap_servers, "all", b"before").startswith("offset 0")
        wait_for("the first record committed", lambda: high_watermark(pc.bootstrap_servers) == 1, 10)

        for follower in followers:
            pc.network.partition(pc.name(leader), pc.name(follower))
        # a follower at the leader's end stays in sync however long it is silent (Kafka's rule): write one
        # more record, on the leader alone, and the followers fall behind it
        stored = write(pc.bootstrap_servers, "1", b"uncommitted")
        assert stored == "offset 1", stored
        wait_for(f"the ISR down to broker {leader}", lambda: isr_and_leader(at_follower)[2] == [leader], 30)
        for broker in pc.broker_ids:  # clients still reach every broker, the cut-off leader included
            assert TOPIC in AdminClient({"bootstrap.servers": pc.bootstrap([broker])}).list_topics(
                TOPIC, timeout=10).topics
        assert write(pc.bootstrap_servers, "all", b"refused") == "NOT_ENOUGH_REPLICAS"
        time.sleep(1)
        assert high_watermark(pc.bootstrap_servers) == 1  # the record at offset 1 is not committed
        kafka_admin = KafkaAdminClient(bootstrap_servers=at_follower, request_timeout_ms=5000)
        try:
            partition = kafka_admin.describe_topic_partitions([TOPIC])["topics"][0]["partitions"][0]
        finally:
            kafka_admin.close()
        assert partition["isr_nodes"] == [leader]
        assert partition["eligible_leader_replicas"]
        assert set(partition["eligible_leader_replicas"]) <= set(followers)

        pc.network.heal()
        wait_for("the ISR full again", lambda: len(isr_and_leader(at_follower)[2]) == 3, 30)
        assert write(pc.bootstrap_servers, "all", b"after").startswith("offset ")
        wait_for("the held record committed", lambda: high_watermark(pc.bootstrap_servers) >= 3, 10)


def test_the_nodes_ports_are_held_while_the_proxies_take_theirs():
    """The proxies bind port 0; the nodes' ports, released by free_ports, must not be among those given."""
    import socket

    from minikafka.processes import _hold, free_ports

    port = free_ports(1)[0]
    held = _hold("127.0.0.1", [port])
    proxy = socket.socket()
    proxy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's servers bind
    try:
        with pytest.raises(OSError):
            proxy.bind(("127.0.0.1", port))
    finally:
        proxy.close()
        for sock in held:
            sock.close()
    with socket.socket() as node:
        node.bind(("127.0.0.1", port))  # free again for the node
