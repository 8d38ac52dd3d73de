"""Kafka Connect in miniature: a file source and a PostgreSQL sink.

Kafka Connect runs *connectors* so that nobody writes the same producer or consumer
twice. A **source** connector copies an outside system into a topic and stores how far
it got (its *source offset*) in a compacted topic, ``connect-offsets``, so a restart
resumes instead of starting over. A **sink** connector is a consumer group that writes
records into an outside system and commits Kafka offsets only after the write. Single
message transforms (SMTs) such as InsertField, MaskField or Filter rewrite records on
the way through.

These two connectors do just that, in a few lines each, so you can see the mechanics:
``FileSource`` reads a JSON-lines file, ``PostgresSink`` upserts into a table.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from confluent_kafka import Consumer, Producer

from ._kafka import ensure_topic, read_to_end

Transform = Callable[[dict], "dict | None"]  # returns the new record, or None to drop it


# -- single message transforms ---------------------------------------------------------------
def insert_field(name: str, value: Any) -> Transform:
    """InsertField: add a constant field (where the record came from, say)."""
    return lambda record: {**record, name: value}


def mask_field(name: str, keep_last: int = 4) -> Transform:
    """MaskField: hide all but the last characters of a field before it reaches Kafka."""
    def mask(record: dict) -> dict:
        if name not in record:
            return record
        text = str(record[name])
        return {**record, name: "*" * max(0, len(text) - keep_last) + text[-keep_last:]}
    return mask


def filter_records(keep: Callable[[dict], bool]) -> Transform:
    """Filter: drop the records ``keep`` says no to."""
    return lambda record: record if keep(record) else None


def apply(transforms: Iterable[Transform], record: dict) -> dict | None:
    for transform in transforms:
        record = transform(record)
        if record is None:
            return None
    return record


# -- a source --------------------------------------------------------------------------------
class FileSource:
    """Copies new lines of a JSON-lines file into a topic, resuming where it stopped.

    The source offset is the number of lines already copied; it is stored in
    ``offsets_topic`` under the key ``[connector name, file path]``, like Connect does.
    """

    def __init__(self, name: str, path: str | Path, topic: str, *, bootstrap: str, key_field: str | None = None,
                 transforms: Iterable[Transform] = (), offsets_topic: str = "connect-offsets"):
        self.name, self.path, self.topic = name, Path(path), topic
        self.bootstrap, self.key_field = bootstrap, key_field
        self.transforms = list(transforms)
        self.offsets_topic = offsets_topic
        self.offset_key = json.dumps([name, {"file": str(self.path)}]).encode()
        ensure_topic(bootstrap, offsets_topic, config={"cleanup.policy": "compact"})
        ensure_topic(bootstrap, topic, partitions=3)

    def stored_offset(self) -> int:
        """Lines copied so far, read back from the offsets topic (0 the first time)."""
        lines = 0
        for msg in read_to_end(self.bootstrap, self.offsets_topic):
            if msg.key() == self.offset_key:
                lines = json.loads(msg.value())["lines"]
        return lines

    def poll(self) -> int:
        """Copy the lines added since the stored offset; return how many records were sent."""
        start = self.stored_offset()
        lines = self.path.read_text().splitlines()[start:]
        producer = Producer({"bootstrap.servers": self.bootstrap, "partitioner": "murmur2_random"})
        sent = 0
        for line in lines:
            record = apply(self.transforms, json.loads(line))
            if record is not None:
                key = str(record[self.key_field]).encode() if self.key_field else None
                producer.produce(self.topic, json.dumps(record).encode(), key)
                sent += 1
        if producer.flush(15):
            raise RuntimeError(f"{self.name}: records were not delivered; the offset is not moved")
        # Only now, with the records safely in Kafka, move the source offset on.
        producer.produce(self.offsets_topic, json.dumps({"lines": start + len(lines)}).encode(), self.offset_key)
        producer.flush(15)
        return sent


# -- a sink ----------------------------------------------------------------------------------
class PostgresSink:
    """A consumer group that upserts each record into a PostgreSQL table by its key column.

    Offsets are committed after the database commit: a crash in between replays a few
    records, and the upsert (``INSERT ... ON CONFLICT DO UPDATE``) makes the replay
    harmless. At-least-once delivery plus an idempotent write is effectively exactly once.
    """

    def __init__(self, name: str, topic: str, dsn: str, table: str, columns: dict[str, str], *,
                 bootstrap: str, key_column: str = "id"):
        self.name, self.topic, self.dsn, self.table = name, topic, dsn, table
        self.columns, self.key_column = columns, key_column
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"connect-{name}",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([topic])

    def create_table(self, conn) -> None:
        """Connect's JDBC sink does this too with ``auto.create=true``."""
        cols = ", ".join(f"{name} {kind}" for name, kind in self.columns.items())
        conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} ({cols}, PRIMARY KEY ({self.key_column}))")

    def upsert_sql(self) -> str:
        names = list(self.columns)
        updates = ", ".join(f"{n} = EXCLUDED.{n}" for n in names if n != self.key_column)
        return (f"INSERT INTO {self.table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))}) "
                f"ON CONFLICT ({self.key_column}) DO UPDATE SET {updates}")

    def run(self, timeout: float = 15, idle: float = 1.5) -> int:
        """Write what the topic holds; stop once nothing new came for ``idle`` seconds."""
        import psycopg
        written, last_seen = 0, time.monotonic()
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.dsn, connect_timeout=3) as conn:
            self.create_table(conn)
            while time.monotonic() < deadline and time.monotonic() - last_seen < idle:
                batch = [m for m in self.consumer.consume(500, 0.3) if not m.error()]
                if not batch:
                    if not self.consumer.assignment():
                        last_seen = time.monotonic()  # still joining the group: not idle yet
                    continue
                rows = [json.loads(m.value()) for m in batch]
                with conn.transaction():
                    conn.cursor().executemany(self.upsert_sql(), [[r.get(c) for c in self.columns] for r in rows])
                self.consumer.commit(asynchronous=False)  # after the database commit, never before
                written, last_seen = written + len(rows), time.monotonic()
        return written

    def close(self) -> None:
        self.consumer.close()
