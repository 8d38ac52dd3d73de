"""Distributed Connect's three compacted topics, with the keys and JSON values Kafka Connect writes.

* ``connect-configs`` (1 partition): ``connector-<name>`` -> ``{"properties": {...}}``,
  ``task-<name>-<n>`` -> ``{"properties": {...}}``, ``commit-<name>`` -> ``{"tasks": n}``,
  ``target-state-<name>`` -> ``{"state": "STARTED" | "PAUSED" | "STOPPED"}``; a deleted
  connector leaves tombstones.
* ``connect-offsets`` (25 partitions): key ``["<connector>", <source partition>]``, value the
  source offset, e.g. ``["file-source", {"filename": "/tmp/sales.txt"}]`` -> ``{"position": 412}``.
  Sink connectors keep their offsets in their consumer group, ``connect-<name>``, instead.
* ``connect-status`` (5 partitions): ``status-connector-<name>`` and ``status-task-<name>-<n>``
  -> ``{"state": "RUNNING", "trace": null, "worker_id": "...", "generation": 2}``.

A worker that starts reads the configs topic to the end and runs what it finds, in the
state it finds it in; a source task asks the offsets topic where it stopped.
"""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka import Producer

from ...client_logs import quiet
from .._kafka import ensure_topic, read_to_end

COMPACT = {"cleanup.policy": "compact"}


def offset_key(connector: str, partition: dict) -> bytes:
    return json.dumps([connector, partition], separators=(",", ":")).encode()


class ConnectTopics:
    def __init__(self, bootstrap: str, *, configs: str = "connect-configs", offsets: str = "connect-offsets",
                 status: str = "connect-status"):
        self.bootstrap, self.configs, self.offsets, self.status = bootstrap, configs, offsets, status
        for topic, partitions in ((configs, 1), (offsets, 25), (status, 5)):
            ensure_topic(bootstrap, topic, partitions, COMPACT)
        # murmur2, like the Java producer: a key lands in the partition a real worker would use
        self.producer = Producer(quiet({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                        "partitioner": "murmur2_random", "linger.ms": 0}))

    def write(self, topic: str, key: str | bytes, value: Any) -> None:
        data = None if value is None else json.dumps(value, separators=(",", ":")).encode()
        self.producer.produce(topic, data, key.encode() if isinstance(key, str) else key)
        if self.producer.flush(15):
            raise RuntimeError(f"could not write {key!r} to {topic}")

    def read(self, topic: str) -> dict[bytes, Any]:
        """The latest value of every key of ``topic`` (None for a tombstone)."""
        latest: dict[bytes, Any] = {}
        for msg in read_to_end(self.bootstrap, topic, timeout=15):
            key, value = msg.key(), msg.value()
            assert key is not None  # Connect's internal topics are keyed
            latest[key] = None if value is None else json.loads(value)
        return latest

    def source_offset(self, connector: str, partition: dict) -> dict | None:
        return self.read(self.offsets).get(offset_key(connector, partition))

    def source_offsets(self, connector: str) -> list[dict]:
        out = []
        for key, value in self.read(self.offsets).items():
            name, partition = json.loads(key)
            if name == connector and value is not None:
                out.append({"partition": partition, "offset": value})
        return out

    def close(self) -> None:
        self.producer.flush(5)
        self.producer.close()
