"""A stateful stream processor in miniature: what Kafka Streams and ksqlDB do.

``CountByKey`` is the Kafka Streams topology ``stream.groupByKey().count()``, or the
ksqlDB query ``CREATE TABLE counts AS SELECT key, COUNT(*) FROM s GROUP BY key``:

1. it consumes an input topic as a consumer group (so the work can be shared out),
2. keeps a *state store*, here a dict from key to count,
3. writes every change to a compacted **changelog** topic, ``<app id>-counts-changelog``,
   and the new count to an output topic,
4. commits its input offsets only after those writes are flushed.

A restarted (or moved) instance rebuilds its state by reading the changelog from the
beginning, then carries on from the committed input offsets. Compaction keeps the
changelog about as long as the number of keys, however many updates there were.

This version is at-least-once: a crash after the writes and before the commit counts a
few records twice. Kafka Streams' ``processing.guarantee=exactly_once_v2`` closes that
gap by putting the writes and the offset commit in one transaction (notebook 08).
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer

from ._kafka import ensure_topic, read_to_end


class CountByKey:
    def __init__(self, app_id: str, source: str, sink: str, *, bootstrap: str, partitions: int = 3):
        self.app_id, self.source, self.sink, self.bootstrap = app_id, source, sink, bootstrap
        self.changelog = f"{app_id}-counts-changelog"
        ensure_topic(bootstrap, self.changelog, partitions, {"cleanup.policy": "compact"})
        ensure_topic(bootstrap, sink, partitions, {"cleanup.policy": "compact"})
        self.counts: dict[bytes, int] = {}
        self.producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random",
                                  "linger.ms": 5})
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": app_id,
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})

    def restore(self) -> int:
        """Rebuild the state store from the changelog; return how many changelog records it read."""
        seen = 0
        for msg in read_to_end(self.bootstrap, self.changelog):
            seen += 1
            if msg.value() is None:
                self.counts.pop(msg.key(), None)  # a tombstone: the key was deleted
            else:
                self.counts[msg.key()] = int(msg.value())
        return seen

    def process(self, key: bytes) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1
        value = str(self.counts[key]).encode()
        self.producer.produce(self.changelog, value, key)
        self.producer.produce(self.sink, value, key)

    def run(self, max_records: int, timeout: float = 15, idle: float = 1.5) -> int:
        """Process up to ``max_records`` input records; stop early once the input is idle."""
        self.consumer.subscribe([self.source])
        done, deadline, last_seen = 0, time.monotonic() + timeout, time.monotonic()
        while done < max_records and time.monotonic() < deadline and time.monotonic() - last_seen < idle:
            batch = [m for m in self.consumer.consume(min(500, max_records - done), 0.3) if not m.error()]
            if not batch:
                if not self.consumer.assignment():
                    last_seen = time.monotonic()  # still joining the group: not idle yet
                continue
            for msg in batch:
                self.process(msg.key())
            self.producer.flush(15)  # changelog and output first ...
            self.consumer.commit(asynchronous=False)  # ... then the input offsets
            done, last_seen = done + len(batch), time.monotonic()
        return done

    def close(self) -> None:
        """Leave the group cleanly (the "crash" in the notebook is simply dropping the object)."""
        self.producer.flush(15)
        self.consumer.close()
