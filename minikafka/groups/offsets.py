"""The records of ``__consumer_offsets``: committed offsets and group metadata.

Kafka keeps consumer positions in a compacted internal topic, not in a database:
each commit is a record whose key names (group, topic, partition) and whose value
holds the offset, so compaction keeps the latest commit per partition and a restarted
coordinator rebuilds its state by reading the topic from the start. A second kind of
record, keyed by the group id, holds the group's generation, protocol, leader and
members. A record with a null value (a tombstone) deletes an offset or a group.

The byte layouts are Kafka's own (big-endian, int16-length strings), so the topic
written here reads like one written by Apache Kafka::

    offset commit key  v1: version int16, group string, topic string, partition int32
    offset commit value v3: version int16, offset int64, leader epoch int32,
                            metadata string, commit timestamp int64
    group metadata key v2: version int16, group string
    group metadata value v3: version int16, protocol type string, generation int32,
                             protocol string?, leader string?, state timestamp int64,
                             members [member id, instance id?, client id, client host,
                                      rebalance timeout int32, session timeout int32,
                                      subscription bytes, assignment bytes]

A group lives in partition ``abs(hashCode(group id)) % offsets.topic.num.partitions``,
Java's ``String.hashCode``; the broker that leads that partition is the group's
coordinator.
"""

from __future__ import annotations

from typing import Any

import struct
from dataclasses import dataclass

TOPIC = "__consumer_offsets"
SEGMENT_BYTES = 100 * 1024 * 1024  # offsets.topic.segment.bytes: small, so compaction can work
OFFSET_KEY_VERSION, OFFSET_VALUE_VERSION = 1, 3
GROUP_KEY_VERSION, GROUP_VALUE_VERSION = 2, 3


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp_ms: int = 0


@dataclass(frozen=True)
class GroupRecord:
    """What the group metadata value carries (members as plain tuples)."""

    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    state_timestamp_ms: int
    members: tuple  # (member id, instance id, client id, host, rebalance ms, session ms, subscription, assignment)


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: 31*h + c over UTF-16 code units, as a signed int32."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition of a group (Kafka's Utils.abs maps MIN_VALUE to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# -- primitive writers and a reader ---------------------------------------------------------
def _str(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def _bytes(b: bytes) -> bytes:
    return struct.pack(">i", len(b)) + b


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def fixed(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str | None:
        n = self.fixed(">h")
        if n < 0:
            return None
        self.pos += n
        return self.data[self.pos - n : self.pos].decode()

    def bytes(self) -> bytes:
        n = self.fixed(">i")
        self.pos += max(n, 0)
        return bytes(self.data[self.pos - max(n, 0) : self.pos])


# -- offset commits -------------------------------------------------------------------------
def offset_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", OFFSET_KEY_VERSION) + _str(group) + _str(topic) + struct.pack(">i", partition)


def offset_value(c: CommittedOffset) -> bytes:
    return (struct.pack(">hqi", OFFSET_VALUE_VERSION, c.offset, c.leader_epoch) + _str(c.metadata)
            + struct.pack(">q", c.commit_timestamp_ms))


def parse_offset_value(data: bytes) -> CommittedOffset:
    r = _Reader(data)
    version = r.fixed(">h")
    offset = r.fixed(">q")
    epoch = r.fixed(">i") if version >= 3 else -1
    metadata = r.string() or ""
    timestamp = r.fixed(">q")
    return CommittedOffset(offset, epoch, metadata, timestamp)


# -- group metadata -------------------------------------------------------------------------
def group_key(group: str) -> bytes:
    return struct.pack(">h", GROUP_KEY_VERSION) + _str(group)


def group_value(g: GroupRecord) -> bytes:
    out = [struct.pack(">h", GROUP_VALUE_VERSION), _str(g.protocol_type), struct.pack(">i", g.generation_id),
           _str(g.protocol_name), _str(g.leader_id), struct.pack(">q", g.state_timestamp_ms),
           struct.pack(">i", len(g.members))]
    for member_id, instance_id, client_id, host, rebalance_ms, session_ms, subscription, assignment in g.members:
        out += [_str(member_id), _str(instance_id), _str(client_id), _str(host),
                struct.pack(">ii", rebalance_ms, session_ms), _bytes(subscription), _bytes(assignment)]
    return b"".join(out)


def parse_group_value(data: bytes) -> GroupRecord:
    """Read group metadata values v0 to v3 (each version added one field)."""
    r = _Reader(data)
    version = r.fixed(">h")
    protocol_type, generation, protocol, leader = r.string() or "", r.fixed(">i"), r.string(), r.string()
    timestamp = r.fixed(">q") if version >= 2 else -1
    members = []
    for _ in range(r.fixed(">i")):
        member_id = r.string()
        instance_id = r.string() if version >= 3 else None
        client_id, host = r.string(), r.string()
        rebalance_ms = r.fixed(">i") if version >= 1 else -1
        session_ms = r.fixed(">i")
        rebalance_ms = session_ms if rebalance_ms < 0 else rebalance_ms
        members.append((member_id, instance_id, client_id, host, rebalance_ms, session_ms, r.bytes(), r.bytes()))
    return GroupRecord(protocol_type, generation, protocol, leader, timestamp, tuple(members))


# -- keys: which kind of record is this? ---------------------------------------------------
def parse_key(data: bytes) -> tuple[str, tuple]:
    """("offset", (group, topic, partition)) or ("group", (group,)); ("unknown", ()) otherwise."""
    r = _Reader(data)
    version = r.fixed(">h")
    if version in (0, 1):
        return "offset", (r.string(), r.string(), r.fixed(">i"))
    if version == 2:
        return "group", (r.string(),)
    return "unknown", ()
