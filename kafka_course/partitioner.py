"""Kafka's default key partitioner: ``murmur2(key) & 0x7fffffff % partitions``.

The Java client (and kafka-python) hash the key bytes with MurmurHash2 (seed
0x9747b28c) and keep the hash positive by masking the sign bit, so the same key
always lands on the same partition while the partition count stays the same.
librdkafka defaults to a CRC32-based partitioner instead; ``partitioner=murmur2_random``
makes it agree with Java. Notebook 02 and the partitioner lab build on this module.
"""

from __future__ import annotations

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """MurmurHash2 as Kafka's ``Utils.murmur2`` computes it (a signed 32-bit result)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = data[whole:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit (not ``abs``, which fails on MIN_VALUE)."""
    return n & 0x7FFFFFFF


def partition_for(key: bytes | str, partitions: int) -> int:
    """The partition Kafka's default partitioner picks for a non-null key."""
    if isinstance(key, str):
        key = key.encode()
    return to_positive(murmur2(key)) % partitions
