"""Reading a topic the way read_committed and read_uncommitted consumers do."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition


def read_topic(bootstrap: str, topic: str, partitions: int, isolation: str = "read_committed",
               timeout: float = 15.0) -> list[tuple[int, int, bytes]]:
    """(partition, offset, value) of every record a consumer with this isolation level gets."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out, eof, deadline = [], set(), time.monotonic() + timeout
    while len(eof) < partitions and time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:
                eof.add(m.partition())
            continue
        out.append((m.partition(), m.offset(), m.value()))
    c.close()
    return out


def values(rows) -> list[bytes]:
    return sorted(v for _, _, v in rows)
