"""Transactions with the real clients: atomic commit and abort across topics and
partitions, read_committed vs read_uncommitted, fencing, timeouts, restarts."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaException, Producer

from tests.transactions.helpers import read_topic, values

PARTITIONS = 3


def txn_producer(bootstrap: str, tid: str, **conf) -> Producer:
    settings = {"bootstrap.servers": bootstrap, "transactional.id": tid, "partitioner": "murmur2_random"}
    settings.update(conf)
    p = Producer(settings)
    p.init_transactions(15)
    return p


@pytest.fixture
def topics(cluster):
    for name in ("orders", "audit"):
        cluster.create_topic(name, PARTITIONS)
    return ("orders", "audit")


def test_confluent_commit_and_abort_across_topics(cluster, bootstrap, topics):
    p = txn_producer(bootstrap, "tx-confluent")
    p.begin_transaction()
    for i in range(30):
        p.produce("orders", b"committed-%d" % i, str(i))
        p.produce("audit", b"committed-audit-%d" % i, str(i))
    p.commit_transaction(15)
    p.begin_transaction()
    for i in range(30):
        p.produce("orders", b"aborted-%d" % i, str(i))
        p.produce("audit", b"aborted-audit-%d" % i, str(i))
    p.flush(10)
    p.abort_transaction(15)
    committed = read_topic(bootstrap, "orders", PARTITIONS)
    everything = read_topic(bootstrap, "orders", PARTITIONS, "read_uncommitted")
    assert values(committed) == sorted(b"committed-%d" % i for i in range(30))
    assert len(everything) == 60  # read_uncommitted also sees the aborted records
    assert values(read_topic(bootstrap, "audit", PARTITIONS)) == sorted(b"committed-audit-%d" % i for i in range(30))
    # markers occupy offsets that applications never see
    offsets = sorted(o for p_, o, _ in everything if p_ == everything[0][0])
    assert offsets != list(range(len(offsets)))
    states = cluster.partition_offsets("orders")
    assert sum(s["log_end_offset"] for s in states) == 60 + 2 * PARTITIONS  # one commit + one abort marker each


def test_kafka_python_commit_and_abort(cluster, bootstrap, topics):
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="tx-kafka-python")
    p.init_transactions()
    p.begin_transaction()
    for i in range(20):
        p.send("orders", key=str(i).encode(), value=b"kp-committed-%d" % i)
    p.commit_transaction()
    p.begin_transaction()
    for i in range(20):
        p.send("orders", key=str(i).encode(), value=b"kp-aborted-%d" % i)
    p.flush()
    p.abort_transaction()
    p.close()
    assert values(read_topic(bootstrap, "orders", PARTITIONS)) == sorted(b"kp-committed-%d" % i for i in range(20))
    assert len(read_topic(bootstrap, "orders", PARTITIONS, "read_uncommitted")) == 40


def test_open_transaction_blocks_read_committed_until_it_ends(cluster, bootstrap, topics):
    p = txn_producer(bootstrap, "tx-open")
    p.begin_transaction()
    p.produce("orders", b"pending", "k")
    p.flush(10)
    plain = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    plain.produce("orders", b"after-the-open-transaction", "k")  # same key: same partition, later offset
    plain.flush(10)
    assert read_topic(bootstrap, "orders", PARTITIONS, timeout=5) == []  # stuck at the last stable offset
    p.commit_transaction(15)
    assert values(read_topic(bootstrap, "orders", PARTITIONS)) == [b"after-the-open-transaction", b"pending"]


def test_zombie_producer_is_fenced(cluster, bootstrap, topics):
    zombie = txn_producer(bootstrap, "tx-shared")
    zombie.begin_transaction()
    zombie.produce("orders", b"from-zombie", "z")
    zombie.flush(10)
    successor = txn_producer(bootstrap, "tx-shared")  # same transactional.id: bumps the epoch
    with pytest.raises(KafkaException) as info:
        zombie.commit_transaction(10)
    assert info.value.args[0].fatal() or "fenced" in str(info.value).lower()
    successor.begin_transaction()
    successor.produce("orders", b"from-successor", "s")
    successor.commit_transaction(15)
    assert values(read_topic(bootstrap, "orders", PARTITIONS)) == [b"from-successor"]


def test_a_zombie_is_told_it_is_fenced_at_its_next_send(cluster, bootstrap, topics):
    """After a new instance initializes, the old one's next write is refused with
    INVALID_PRODUCER_EPOCH, as Kafka answers it, and the old producer is fatally fenced:
    it is not left guessing with INVALID_TXN_STATE ("not added to the transaction")."""
    zombie = txn_producer(bootstrap, "tx-zombie")
    zombie.begin_transaction()
    zombie.produce("orders", b"first", "z")
    zombie.flush(10)
    txn_producer(bootstrap, "tx-zombie")  # same transactional.id: bumps the epoch, aborts the open transaction
    zombie.produce("orders", b"second", "z")
    with pytest.raises(KafkaException):  # the fatal error surfaces from flush
        zombie.flush(10)
    with pytest.raises(KafkaException) as info:
        zombie.commit_transaction(10)
    error = info.value.args[0]
    assert error.fatal() and "fenced" in str(error).lower(), str(error)
    assert "old epoch" in str(error)  # INVALID_PRODUCER_EPOCH from the Produce answer, not INVALID_TXN_STATE


def test_timed_out_transaction_is_aborted_and_unblocks_readers(cluster, bootstrap, topics):
    abandoned = txn_producer(bootstrap, "tx-abandoned", **{"transaction.timeout.ms": 1500})
    abandoned.begin_transaction()
    abandoned.produce("orders", b"never-committed", "k")
    abandoned.flush(10)
    plain = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    plain.produce("orders", b"visible-after-abort", "k")
    plain.flush(10)
    deadline = time.monotonic() + 15
    got = []
    while time.monotonic() < deadline and not got:
        got = read_topic(bootstrap, "orders", PARTITIONS, timeout=2)
    assert values(got) == [b"visible-after-abort"]


def test_transactions_survive_a_broker_restart(make_cluster, tmp_path):
    cluster = make_cluster(data_dir=tmp_path / "d")
    cluster.create_topic("orders", PARTITIONS)
    p = txn_producer(cluster.bootstrap_servers, "tx-restart")
    p.begin_transaction()
    p.produce("orders", b"aborted-before-restart", "a")
    p.flush(10)
    p.abort_transaction(15)
    p.begin_transaction()
    p.produce("orders", b"committed-across-restart", "b")
    p.flush(10)
    cluster.restart()  # the coordinator reloads __transaction_state; partitions rebuild their state
    p.commit_transaction(30)
    bootstrap = cluster.bootstrap_servers
    assert values(read_topic(bootstrap, "orders", PARTITIONS)) == [b"committed-across-restart"]
    assert len(read_topic(bootstrap, "orders", PARTITIONS, "read_uncommitted")) == 2


def test_lost_produce_acknowledgements_cause_no_duplicates(cluster, bootstrap):
    cluster.create_topic("payments", 1)
    cluster.faults().drop_responses("Produce", 3)  # appended, then the connection drops: no acknowledgement
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    acked = []
    for i in range(10):
        p.produce("payments", b"pay-%d" % i, on_delivery=lambda err, m: err is None and acked.append(m.value()))
        p.flush(30)
    assert len(acked) == 10
    stored = [v for _, _, v in read_topic(bootstrap, "payments", 1, "read_uncommitted")]
    assert stored == [b"pay-%d" % i for i in range(10)]  # each once, in order, despite the retries


def test_lost_acknowledgements_without_idempotence_duplicate(cluster, bootstrap):
    """The contrast the course shows: the same fault without idempotence writes twice."""
    cluster.create_topic("payments-plain", 1)
    cluster.faults().drop_responses("Produce", 1)
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": False, "acks": 1, "linger.ms": 0,
                  "retries": 5})
    p.produce("payments-plain", b"pay-once")
    p.flush(30)
    stored = [v for _, _, v in read_topic(bootstrap, "payments-plain", 1, "read_uncommitted")]
    assert stored == [b"pay-once", b"pay-once"]


def test_back_to_back_transactions_on_a_replicated_cluster_never_see_invalid_txn_state(make_cluster):
    """A produce right after a commit used to meet INVALID_TXN_STATE under load: the
    coordinator's timer completed the previous transaction a second time, clearing the
    partitions the next one had just added."""
    cluster = make_cluster(brokers=3)
    cluster.create_topic("burst", partitions=3, replication_factor=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": "burst-tx",
                         "linger.ms": 0})
    producer.init_transactions(30)
    for n in range(60):
        producer.begin_transaction()
        for p in range(3):
            producer.produce("burst", f"{n}-{p}".encode(), partition=p)
        producer.commit_transaction(30)  # raises KafkaException on INVALID_TXN_STATE
    offsets = cluster.partition_offsets("burst")
    assert [o["high_watermark"] for o in offsets] == [120, 120, 120]  # 60 records + 60 markers each
