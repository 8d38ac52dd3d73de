"""The consumer protocol embedded in JoinGroup and SyncGroup: subscriptions and assignments as bytes.

With the classic protocol the broker never reads these bytes: the group leader decodes
its members' *ConsumerProtocolSubscription* and encodes each one's
*ConsumerProtocolAssignment*. A consumer group that has classic members (KIP-848's online
migration) must read and write them itself, since its server-side assignor decides:

* Subscription: version (int16), topics (array of string), user data (bytes); v1 adds the
  partitions the member owns (cooperative rebalancing, KIP-429), v2 its generation, v3
  its rack (KIP-881).
* Assignment: version (int16), partitions (array of topic and int32 array), user data.

A malformed subscription raises ``ValueError``; the caller answers with Kafka's error.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

TopicPartition = tuple[str, int]
MAX_VERSION = 3  # the newest Subscription/Assignment version this broker knows


@dataclass(frozen=True)
class Subscription:
    version: int
    topics: tuple[str, ...]
    owned: frozenset[TopicPartition]
    rack_id: str | None = None


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str | None:
        n = self.take(">h")
        if n < 0:
            return None
        value = self.data[self.pos : self.pos + n].decode()
        self.pos += n
        return value

    def skip_bytes(self) -> None:
        n = self.take(">i")
        self.pos += max(n, 0)

    def partitions(self) -> frozenset[TopicPartition]:
        out = set()
        for _ in range(self.take(">i")):
            topic = self.string() or ""
            out |= {(topic, self.take(">i")) for _ in range(self.take(">i"))}
        return frozenset(out)


def parse_subscription(metadata: bytes) -> Subscription:
    """A JoinGroup protocol's metadata as a consumer's subscription (ValueError if malformed)."""
    try:
        r = _Reader(metadata)
        version = r.take(">h")
        topics = tuple(r.string() or "" for _ in range(r.take(">i")))
        r.skip_bytes()  # user data: the client-side assignor's, of no use to the broker's
        owned = r.partitions() if version >= 1 and r.pos < len(metadata) else frozenset()
        if version >= 2 and r.pos < len(metadata):
            r.take(">i")  # generation id
        rack = r.string() if version >= 3 and r.pos < len(metadata) else None
        return Subscription(version, topics, owned, rack)
    except (struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"malformed consumer protocol subscription: {e}") from None


def parse_assignment(data: bytes) -> frozenset[TopicPartition]:
    """The partitions of a ConsumerProtocolAssignment (none for empty or malformed bytes)."""
    try:
        r = _Reader(data)
        r.take(">h")
        return r.partitions()
    except (struct.error, UnicodeDecodeError):
        return frozenset()


def encode_assignment(partitions: Iterable[TopicPartition], version: int = 0) -> bytes:
    """A ConsumerProtocolAssignment of these partitions, with no user data."""
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    out = [struct.pack(">hi", min(max(version, 0), MAX_VERSION), len(by_topic))]
    for topic, indexes in by_topic.items():
        name = topic.encode()
        out.append(struct.pack(">h", len(name)) + name + struct.pack(f">i{len(indexes)}i", len(indexes), *indexes))
    out.append(struct.pack(">i", -1))  # null user data
    return b"".join(out)
