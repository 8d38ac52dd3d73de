"""Records of ``__transaction_state``, in the layout Kafka uses (TransactionLogKey/Value).

Key (version 0): ``int16 version, string transactional_id``.
Value version 0: ``int16 version, int64 producer_id, int16 producer_epoch, int32 timeout_ms,
int8 state, [string topic, [int32 partition]], int64 last_update_ms, int64 start_ms``.
Value version 1 (flexible, written where the cluster finalizes ``transaction.version`` 2) has the
same fields in the compact encoding, then the tagged fields transaction protocol v2 needs
(KIP-890 part 2): 0 PreviousProducerId and 1 NextProducerId (int64, default -1),
2 ClientTransactionVersion (int16, default 0). With them a coordinator that loads the
partition (after a restart or a move) answers a retried EndTxn as the first one did.
A null value (tombstone) forgets the transactional id. The topic is compacted, so the
newest record per id is the coordinator's state after a restart.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .states import TxnState

TAG_PREVIOUS_PRODUCER_ID, TAG_NEXT_PRODUCER_ID, TAG_CLIENT_TRANSACTION_VERSION = 0, 1, 2


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
    # Transaction protocol v2, kept in the log (value version 1): the id before the last
    # completion (a retry after the epoch was used up carries it), the id the producer moves
    # to once the markers of its last epoch are written (-1: none), and the protocol the
    # producer's last EndTxn spoke.
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    # The epoch before the last InitProducerId bump (KIP-360): a retried bump gets the same
    # epoch again. In memory only, as in Kafka.
    last_producer_epoch: int = -1


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def _read_string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    return buf[pos + 2:pos + 2 + n].decode(), pos + 2 + n


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def encode_key(transactional_id: str) -> bytes:
    return struct.pack(">h", 0) + _string(transactional_id)


def decode_key(key: bytes) -> str:
    return _read_string(key, 2)[0]


def _by_topic(m: TxnMetadata) -> dict[str, list[int]]:
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(m.partitions):
        by_topic.setdefault(topic, []).append(p)
    return by_topic


def encode_value(m: TxnMetadata, version: int = 0) -> bytes:
    """The value record; ``version`` 1 is the flexible layout with the v2 tagged fields."""
    head = struct.pack(">hqhib", version, m.producer_id, m.producer_epoch, m.timeout_ms, int(m.state))
    tail = struct.pack(">qq", m.last_update_ms, m.start_ms)
    if version == 0:
        parts = struct.pack(">i", len(_by_topic(m))) + b"".join(
            _string(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps)
            for t, ps in _by_topic(m).items())
        return head + parts + tail
    parts = _varint(len(_by_topic(m)) + 1) + b"".join(
        _varint(len(t.encode()) + 1) + t.encode() + _varint(len(ps) + 1)
        + b"".join(struct.pack(">i", p) for p in ps) + b"\x00" for t, ps in _by_topic(m).items())
    return head + parts + tail + _tagged_fields(m)


def _tagged_fields(m: TxnMetadata) -> bytes:
    """Kafka writes a tagged field only when it differs from its default."""
    fields = [(tag, struct.pack(fmt, value)) for tag, fmt, value, default in (
        (TAG_PREVIOUS_PRODUCER_ID, ">q", m.previous_producer_id, -1),
        (TAG_NEXT_PRODUCER_ID, ">q", m.next_producer_id, -1),
        (TAG_CLIENT_TRANSACTION_VERSION, ">h", m.client_transaction_version, 0)) if value != default]
    return _varint(len(fields)) + b"".join(_varint(tag) + _varint(len(data)) + data for tag, data in fields)


def decode_value(transactional_id: str, value: bytes) -> TxnMetadata:
    version, pid, epoch, timeout, state = struct.unpack_from(">hqhib", value, 0)
    partitions, pos = (_read_partitions_v0 if version == 0 else _read_partitions_v1)(value, 17)
    last_update, start = struct.unpack_from(">qq", value, pos)
    meta = TxnMetadata(transactional_id, pid, epoch, timeout, TxnState(state), partitions, last_update, start)
    if version >= 1:
        _read_tagged_fields(meta, value, pos + 16)
    return meta


def _read_partitions_v0(value: bytes, pos: int) -> tuple[set[tuple[str, int]], int]:
    (n_topics,) = struct.unpack_from(">i", value, pos)
    pos += 4
    partitions = set()
    for _ in range(max(n_topics, 0)):  # -1: null (Kafka writes null for EMPTY)
        topic, pos = _read_string(value, pos)
        (n,) = struct.unpack_from(">i", value, pos)
        pos += 4
        partitions |= {(topic, p) for p in struct.unpack_from(f">{n}i", value, pos)}
        pos += 4 * n
    return partitions, pos


def _read_partitions_v1(value: bytes, pos: int) -> tuple[set[tuple[str, int]], int]:
    n_topics, pos = _read_varint(value, pos)
    partitions = set()
    for _ in range(max(n_topics - 1, 0)):  # compact: length + 1, 0 for null
        size, pos = _read_varint(value, pos)
        topic, pos = value[pos:pos + size - 1].decode(), pos + size - 1
        n, pos = _read_varint(value, pos)
        partitions |= {(topic, p) for p in struct.unpack_from(f">{n - 1}i", value, pos)}
        pos += 4 * (n - 1)
        pos = _skip_tagged_fields(value, pos)
    return partitions, pos


def _skip_tagged_fields(value: bytes, pos: int) -> int:
    count, pos = _read_varint(value, pos)
    for _ in range(count):
        _, pos = _read_varint(value, pos)
        size, pos = _read_varint(value, pos)
        pos += size
    return pos


def _read_tagged_fields(meta: TxnMetadata, value: bytes, pos: int) -> None:
    count, pos = _read_varint(value, pos)
    for _ in range(count):
        tag, pos = _read_varint(value, pos)
        size, pos = _read_varint(value, pos)
        data = value[pos:pos + size]
        pos += size
        if tag == TAG_PREVIOUS_PRODUCER_ID:
            (meta.previous_producer_id,) = struct.unpack(">q", data)
        elif tag == TAG_NEXT_PRODUCER_ID:
            (meta.next_producer_id,) = struct.unpack(">q", data)
        elif tag == TAG_CLIENT_TRANSACTION_VERSION:
            (meta.client_transaction_version,) = struct.unpack(">h", data)
