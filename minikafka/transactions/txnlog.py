"""Records of ``__transaction_state``, in the layout Kafka uses.

Key (version 0): ``int16 version, string transactional_id``.
Value (version 0): ``int16 version, int64 producer_id, int16 producer_epoch,
int32 timeout_ms, int8 state, [string topic, [int32 partition]], int64 last_update_ms,
int64 start_ms``. A null value (tombstone) forgets the transactional id. The topic is
compacted, so the newest record per id is the coordinator's state after a restart.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .states import TxnState


@dataclass
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    last_update_ms: int = 0
    start_ms: int = -1
    # Transaction protocol v2 (kept in memory only; Kafka writes them as tagged fields):
    # the producer id and epoch an EndTxn v5 came with, so its retry is recognised after the
    # bump, and the id to move to once the epoch is used up (-1: none).
    last_producer: tuple[int, int] = (-1, -1)
    next_producer_id: int = -1


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def _read_string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    return buf[pos + 2:pos + 2 + n].decode(), pos + 2 + n


def encode_key(transactional_id: str) -> bytes:
    return struct.pack(">h", 0) + _string(transactional_id)


def decode_key(key: bytes) -> str:
    return _read_string(key, 2)[0]


def encode_value(m: TxnMetadata) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(m.partitions):
        by_topic.setdefault(topic, []).append(p)
    out = struct.pack(">hqhib", 0, m.producer_id, m.producer_epoch, m.timeout_ms, int(m.state))
    out += struct.pack(">i", len(by_topic))
    for topic, parts in by_topic.items():
        out += _string(topic) + struct.pack(">i", len(parts)) + b"".join(struct.pack(">i", p) for p in parts)
    return out + struct.pack(">qq", m.last_update_ms, m.start_ms)


def decode_value(transactional_id: str, value: bytes) -> TxnMetadata:
    _v, pid, epoch, timeout, state = struct.unpack_from(">hqhib", value, 0)
    pos = 17
    (n_topics,) = struct.unpack_from(">i", value, pos)
    pos += 4
    partitions = set()
    for _ in range(n_topics):
        topic, pos = _read_string(value, pos)
        (n,) = struct.unpack_from(">i", value, pos)
        pos += 4
        partitions |= {(topic, p) for p in struct.unpack_from(f">{n}i", value, pos)}
        pos += 4 * n
    last_update, start = struct.unpack_from(">qq", value, pos)
    return TxnMetadata(transactional_id, pid, epoch, timeout, TxnState(state), partitions, last_update, start)
