"""What the admin API tests share: a three-broker cluster with two log directories per
broker, producing records, reading a partition back, and waiting (the kafka-python admin
client factory is the ``kafka_admin`` fixture of conftest.py)."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from tests.replication.helpers import read_partitions, wait_for

__all__ = ["log_files", "produce", "read_partitions", "three_brokers", "wait_for"]


def three_brokers(make_cluster, tmp_path: Path, **config):
    """Brokers 1-3, each with log.dirs a/broker-N and b/broker-N under ``tmp_path``."""
    dirs = f"{tmp_path / 'a'},{tmp_path / 'b'}"
    return make_cluster(brokers=3, config={"log.dirs": dirs, **config})


def produce(cluster, topic: str, count: int, partition: int = 0, prefix: str = "r") -> list[bytes]:
    """``count`` acknowledged records, each in a batch of its own (so a log has many batches)."""
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0, "acks": "all"})
    values = [f"{prefix}{i}".encode() for i in range(count)]
    for v in values:
        p.produce(topic, v, partition=partition)
        assert p.flush(20) == 0
    return values


def log_files(partition_dir: Path) -> int:
    """Bytes of a partition directory's segment files (what Kafka reports as its size)."""
    return sum(f.stat().st_size for f in partition_dir.glob("*.log"))
