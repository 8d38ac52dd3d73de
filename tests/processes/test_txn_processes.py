"""Transactions across broker processes (KIP-98, KIP-890): the coordinator on one broker, the partitions
led by others, every step over TCP with confluent-kafka (librdkafka) as the client.

The coordinator reaches the leaders with WriteTxnMarkers and the leaders ask it about a transaction's first
write with AddPartitionsToTxn (verify only); the group coordinator asks it about TxnOffsetCommit. Each test
picks its transactional ids and groups so that the coordinators and the leaders are different processes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from minikafka.errors import ErrorCode
from minikafka.groups.offsets import partition_for
from minikafka.processes import ProcessCluster, wait_for
from tests.rawclient import RawClient
from tests.transactions import test_protocol_v2 as raw

TXN_STATE, OFFSETS = "__transaction_state", "__consumer_offsets"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[ProcessCluster]:
    with ProcessCluster(brokers=3, controllers=3, data_dir=tmp_path_factory.mktemp("txn")) as pc:
        yield pc


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    """Each partition's leader, as the cluster's metadata says."""
    found = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics.get(topic)
    if found is None or found.error is not None:
        return {}
    return {p: found.partitions[p].leader for p in found.partitions}


def create_spread_topic(bootstrap: str, name: str) -> dict[int, int]:
    """Three partitions, replication factor 3, led by three different brokers."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 3, 3)])[name].result(30)

    def spread() -> dict[int, int] | None:
        led = leaders(bootstrap, name)
        return led if sorted(led.values()) == [1, 2, 3] else None

    return wait_for(f"{name} led by three brokers", spread, 30)


def coordinator_of(bootstrap: str, internal: str, key: str) -> int:
    """The broker leading the key's partition of ``__transaction_state`` or ``__consumer_offsets``."""

    def led() -> dict[int, int] | None:
        found = leaders(bootstrap, internal)
        return found if found and all(b > 0 for b in found.values()) else None

    placed = wait_for(f"{internal} with leaders", led, 30)
    return placed[partition_for(key, len(placed))]


def transactional_producer(bootstrap: str, tid: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "message.timeout.ms": 60_000})
    producer.init_transactions(30)
    return producer


def read_all(bootstrap: str, topic: str, isolation: str, expected: int, timeout: float = 20) -> tuple[list[bytes], Any]:
    """Every record of the topic's three partitions under ``isolation``, and the consumer's end offsets
    (the last stable offset under read_committed, the high watermark under read_uncommitted)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{uuid.uuid4().hex[:6]}",
                         "isolation.level": isolation, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and len(got) < expected:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got.append(message.value())
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                for p in range(3)}
        return got, ends
    finally:
        consumer.close()


def tid_on_other_broker(bootstrap: str, avoid: set[int], prefix: str) -> tuple[str, int]:
    """A transactional id whose coordinator is not among ``avoid`` (the topic's __transaction_state must exist)."""
    for i in range(200):
        tid = f"{prefix}-{i}"
        broker = coordinator_of(bootstrap, TXN_STATE, tid)
        if broker not in avoid:
            return tid, broker
    raise AssertionError(f"no transactional id coordinated outside {avoid}")


def ensure_txn_state(bootstrap: str) -> None:
    """__transaction_state exists after a first InitProducerId; a throw-away producer asks for it."""
    transactional_producer(bootstrap, f"warm-{uuid.uuid4().hex[:6]}")
    coordinator_of(bootstrap, TXN_STATE, "x")


def test_commit_and_abort_across_three_leaders_reach_read_committed_and_read_uncommitted(cluster):
    bootstrap = cluster.bootstrap_servers
    led = create_spread_topic(bootstrap, "spread")
    ensure_txn_state(bootstrap)
    tid, coordinator = tid_on_other_broker(bootstrap, set(), "spread")
    assert {b for b in led.values() if b != coordinator}, "two of the partitions are led by other brokers"
    producer = transactional_producer(bootstrap, tid)
    for outcome, prefix in (("commit", "c"), ("abort", "a"), ("commit", "d")):
        producer.begin_transaction()
        for p in range(3):
            for i in range(4):
                producer.produce("spread", value=f"{prefix}{p}-{i}".encode(), partition=p)
        producer.flush(30)
        if outcome == "commit":
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    committed = sorted(f"{x}{p}-{i}".encode() for x in "cd" for p in range(3) for i in range(4))
    aborted = sorted(f"a{p}-{i}".encode() for p in range(3) for i in range(4))

    got, stable = read_all(bootstrap, "spread", "read_committed", len(committed))
    assert sorted(got) == committed  # nothing aborted, nothing missing, on every leader
    # three markers per partition (commit, abort, commit) take offsets 4, 9 and 14: the stable offset passed them
    assert stable == {0: 15, 1: 15, 2: 15}
    got, high = read_all(bootstrap, "spread", "read_uncommitted", len(committed) + len(aborted))
    assert sorted(got) == sorted(committed + aborted)
    assert high == stable


def test_consume_transform_produce_commits_offsets_through_a_group_coordinator_on_another_broker(cluster):
    bootstrap = cluster.bootstrap_servers
    create_spread_topic(bootstrap, "ctp-in")
    create_spread_topic(bootstrap, "ctp-out")
    plain = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for p in range(3):
        for i in range(3):
            plain.produce("ctp-in", value=f"in{p}-{i}".encode(), partition=p)
    assert plain.flush(30) == 0
    ensure_txn_state(bootstrap)
    warm = Consumer({"bootstrap.servers": bootstrap, "group.id": "warm"})  # __consumer_offsets, on first need
    warm.subscribe(["ctp-in"])
    warm.poll(1)
    warm.close()
    tid, txn_coordinator = tid_on_other_broker(bootstrap, set(), "ctp")
    group = next(g for g in (f"ctp-group-{i}" for i in range(200))
                 if coordinator_of(bootstrap, OFFSETS, g) != txn_coordinator)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe(["ctp-in"])
    producer = transactional_producer(bootstrap, tid)
    seen = 0
    try:
        deadline = time.monotonic() + 30
        while seen < 9 and time.monotonic() < deadline:
            messages = [m for m in consumer.consume(9, 1.0) if m.error() is None]
            if not messages:
                continue
            producer.begin_transaction()
            for m in messages:
                producer.produce("ctp-out", value=m.value().upper(), partition=m.partition())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(30)
            seen += len(messages)
        committed = consumer.committed([TopicPartition("ctp-in", p) for p in range(3)], timeout=10)
    finally:
        consumer.close()
    assert seen == 9
    assert {tp.partition: tp.offset for tp in committed} == {0: 3, 1: 3, 2: 3}
    got, _ = read_all(bootstrap, "ctp-out", "read_committed", 9)
    assert sorted(got) == sorted(f"IN{p}-{i}".encode() for p in range(3) for i in range(3))


def test_a_leader_asks_the_coordinator_on_another_broker_before_a_transactions_first_write(cluster):
    """KIP-890 over TCP: a Produce v11 to a partition never added is refused by its leader (AddPartitionsToTxn
    verify-only to the coordinator: INVALID_TXN_STATE); a Produce v12 has the leader add it (transaction
    protocol v2), and EndTxn v5 has the coordinator write the marker there."""
    bootstrap = cluster.bootstrap_servers
    led = create_spread_topic(bootstrap, "asked")
    ensure_txn_state(bootstrap)
    tid, coordinator = tid_on_other_broker(bootstrap, set(), "asked")
    partition, leader = next((p, b) for p, b in led.items() if b != coordinator)
    with RawClient(cluster.bootstrap([coordinator])) as to_coordinator, \
            RawClient(cluster.bootstrap([leader])) as to_leader:
        pid, epoch = raw.init(to_coordinator, tid)
        assert raw.produce(to_leader, pid, epoch, 0, partition, version=11, topic="asked", tid=tid) == \
            ErrorCode.invalid_txn_state
        assert raw.produce(to_leader, pid, epoch, 0, partition, version=12, topic="asked", tid=tid) == ErrorCode.none
        code, _, next_epoch = raw.end_txn(to_coordinator, pid, epoch, commit=True, tid=tid)
        assert (code, next_epoch) == (ErrorCode.none, epoch + 1)
    got, stable = read_all(bootstrap, "asked", "read_committed", 1)
    assert got == [b"v"]
    assert stable[partition] == 2  # the record and the commit marker the coordinator sent to the leader


@pytest.mark.slow
def test_killing_a_partition_leader_before_commit_leaves_the_markers_to_its_successor(tmp_path):
    # The coordinator's own state on its broker alone: its PREPARE_COMMIT is not held up by the killed broker
    # leaving the ISR, so the markers go out while the metadata still names the killed broker as leader.
    options, config = ("--broker-session-timeout-ms", "3000"), {"transaction.state.log.replication.factor": 1}
    with ProcessCluster(brokers=3, controllers=3, data_dir=tmp_path, controller_options=options, config=config) as pc:
        led = create_spread_topic(pc.bootstrap_servers, "failover")
        ensure_txn_state(pc.bootstrap_servers)
        tid, coordinator = tid_on_other_broker(pc.bootstrap_servers, set(), "failover")
        victim_partition, victim = next((p, b) for p, b in led.items() if b != coordinator)
        producer = transactional_producer(pc.bootstrap_servers, tid)
        producer.begin_transaction()
        for p in range(3):
            for i in range(5):
                producer.produce("failover", value=f"f{p}-{i}".encode(), partition=p)
        assert producer.flush(30) == 0  # acks=all: every record is on the in-sync replicas
        pc.kill(victim)
        others = [b for b in pc.broker_ids if b != victim]
        try:
            producer.commit_transaction(60)
        except KafkaException as e:  # librdkafka may lose its connection to the killed broker meanwhile
            assert e.args[0].retriable(), e
            producer.commit_transaction(60)
        via = pc.bootstrap(others)
        wait_for(f"a new leader for failover-{victim_partition}",
                 lambda: leaders(via, "failover").get(victim_partition) in others, 30)
        got, stable = read_all(via, "failover", "read_committed", 15, timeout=40)
        assert sorted(got) == sorted(f"f{p}-{i}".encode() for p in range(3) for i in range(5))
        assert stable == {0: 6, 1: 6, 2: 6}  # five records and the commit marker, on the new leader too
        assert "markers for" in pc.output(coordinator)  # the coordinator did have to send one again


@pytest.mark.slow
def test_a_paused_partition_leader_does_not_hold_the_commit_and_its_marker_reaches_the_next_leader(tmp_path):
    """A leader that stops answering (SIGSTOP) holds its WriteTxnMarkers until the request times out; EndTxn
    is answered once the coordinator has waited a few seconds for the markers (Kafka answers once the
    decision is written), and the marker goes to the partition's next leader after that."""
    options, config = ("--broker-session-timeout-ms", "3000"), {"transaction.state.log.replication.factor": 1}
    with ProcessCluster(brokers=3, controllers=3, data_dir=tmp_path, controller_options=options, config=config) as pc:
        led = create_spread_topic(pc.bootstrap_servers, "paused")
        ensure_txn_state(pc.bootstrap_servers)
        tid, coordinator = tid_on_other_broker(pc.bootstrap_servers, set(), "paused")
        victim = next(b for b in led.values() if b != coordinator)
        producer = transactional_producer(pc.bootstrap_servers, tid)
        producer.begin_transaction()
        for p in range(3):
            producer.produce("paused", value=f"p{p}".encode(), partition=p)
        assert producer.flush(30) == 0
        pc.pause(victim)
        try:
            started = time.monotonic()
            producer.commit_transaction(20)
            assert time.monotonic() - started < 15  # not the marker request's 30 s timeout
            others = [b for b in pc.broker_ids if b != victim]
            got, stable = read_all(pc.bootstrap(others), "paused", "read_committed", 3, timeout=60)
        finally:
            pc.resume(victim)
        assert sorted(got) == [b"p0", b"p1", b"p2"]
        assert stable == {0: 2, 1: 2, 2: 2}
