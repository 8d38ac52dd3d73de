"""A Jepsen-style history of produce attempts and the check of what the log kept.

Producers record each attempt as it is sent (:meth:`History.invoke`) and its outcome as
the delivery report arrives (:meth:`History.complete`): acknowledged with the partition
and offset the broker returned, or failed. After the faults, every partition is read
from the beginning and :func:`check` tells whether the guarantees of an idempotent
``acks=all`` producer with ``min.insync.replicas`` held (KIP-98's exactly-once per
partition, the ISR's durability):

- no acknowledged record is lost, and each sits at the offset its acknowledgement gave;
- no record is stored twice;
- each producer's acknowledged records keep their send order in each partition;
- every in-sync replica holds the same records below the high watermark.

A failed attempt may or may not be stored (the broker may have written it before the
answer was lost): Jepsen calls it indeterminate, and it is counted, not judged. The
module has no Kafka client in it: the test and ``bench/faults.py`` feed it.
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..records import iter_records

Stored = Mapping[int, Sequence[tuple[int, bytes]]]  # partition -> (offset, value) from the start


@dataclass
class Attempt:
    """One produce call. ``acked`` is None while no delivery report has come."""

    producer: str
    key: bytes | None
    value: bytes
    acked: bool | None = None
    partition: int | None = None
    offset: int | None = None
    error: str | None = None


class History:
    """The attempts of every producer, in the order they were sent (thread-safe)."""

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()

    def invoke(self, producer: str, key: bytes | None, value: bytes) -> int:
        """A record handed to a producer; returns the index to complete it with."""
        with self._lock:
            self.attempts.append(Attempt(producer, key, value))
            return len(self.attempts) - 1

    def complete(
        self, index: int, *, partition: int | None = None, offset: int | None = None, error: str | None = None
    ) -> None:
        """The delivery report: acknowledged at (partition, offset), or failed with ``error``."""
        with self._lock:
            attempt = self.attempts[index]
            attempt.acked, attempt.partition, attempt.offset, attempt.error = error is None, partition, offset, error

    def add(
        self,
        producer: str,
        value: bytes,
        partition: int,
        offset: int | None,
        acked: bool = True,
        key: bytes | None = None,
    ) -> None:
        """Record a finished attempt at once (for histories built by hand)."""
        index = self.invoke(producer, key, value)
        self.complete(index, partition=partition, offset=offset, error=None if acked else "failed")

    @property
    def acknowledged(self) -> list[Attempt]:
        return [a for a in self.attempts if a.acked]


@dataclass
class Check:
    """What :func:`check` found. ``ok`` when nothing acknowledged was lost, duplicated,
    moved or reordered and the replicas agree."""

    writes: int = 0
    acknowledged: int = 0
    failed: int = 0
    indeterminate_stored: int = 0  # failed attempts that the log holds anyway (allowed)
    lost: list[Attempt] = field(default_factory=list)
    duplicated: dict[bytes, list[tuple[int, int]]] = field(default_factory=dict)  # value -> (partition, offset)s
    wrong_offset: list[tuple[Attempt, int]] = field(default_factory=list)
    reordered: list[str] = field(default_factory=list)
    diverged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.wrong_offset or self.reordered or self.diverged)

    def figures(self) -> dict[str, int]:
        return {
            "writes": self.writes,
            "acknowledged": self.acknowledged,
            "failed": self.failed,
            "indeterminate_stored": self.indeterminate_stored,
            "lost": len(self.lost),
            "duplicated": len(self.duplicated),
            "wrong_offset": len(self.wrong_offset),
            "reordered": len(self.reordered),
            "diverged": len(self.diverged),
        }


def check(
    history: History, stored: Stored, replicas: Mapping[int, Mapping[int, Sequence[tuple[int, bytes]]]] | None = None
) -> Check:
    """Judge ``history`` against the records read back, and the replicas' logs if given."""
    result = Check(
        writes=len(history.attempts),
        acknowledged=len(history.acknowledged),
        failed=sum(1 for a in history.attempts if a.acked is False),
    )
    where: dict[bytes, list[tuple[int, int, int]]] = defaultdict(list)  # value -> (partition, position, offset)
    for partition, records in stored.items():
        for position, (offset, value) in enumerate(records):
            where[value].append((partition, position, offset))
    result.duplicated = {value: [(p, o) for p, _, o in places] for value, places in where.items() if len(places) > 1}
    result.indeterminate_stored = sum(1 for a in history.attempts if a.acked is False and a.value in where)
    _check_acknowledged(history, where, result)
    if replicas is not None:
        result.diverged = diverging_replicas(replicas)
    return result


def _check_acknowledged(history: History, where: Mapping[bytes, list[tuple[int, int, int]]], result: Check) -> None:
    positions: dict[tuple[str, int], list[tuple[int, bytes]]] = defaultdict(list)
    for attempt in history.acknowledged:
        places = [p for p in where.get(attempt.value, []) if p[0] == attempt.partition]
        if not places:
            result.lost.append(attempt)
            continue
        partition, position, offset = places[0]
        if attempt.offset is not None and attempt.offset >= 0 and attempt.offset != offset:
            result.wrong_offset.append((attempt, offset))
        positions[(attempt.producer, partition)].append((position, attempt.value))
    for (producer, partition), seen in positions.items():
        for (before, v1), (after, v2) in itertools.pairwise(seen):
            if after < before:
                result.reordered.append(f"{producer} partition {partition}: {v2!r} stored before {v1!r}")


def diverging_replicas(replicas: Mapping[int, Mapping[int, Sequence[tuple[int, bytes]]]]) -> list[str]:
    """Partitions whose in-sync replicas disagree below the high watermark, one sentence each."""
    out = []
    for partition, logs in sorted(replicas.items()):
        items = sorted(logs.items())
        if not items:
            continue
        first_broker, first = items[0]
        for broker, log in items[1:]:
            if list(log) != list(first):
                at = next((i for i, (x, y) in enumerate(zip(log, first)) if x != y), min(len(log), len(first)))
                out.append(
                    f"partition {partition}: broker {broker} differs from broker {first_broker} "
                    f"at record {at} ({len(log)} against {len(first)} records below the high watermark)"
                )
    return out


def replica_logs(cluster: Any, topic: str) -> dict[int, dict[int, list[tuple[int, bytes]]]]:
    """Each partition's in-sync replicas' records below the high watermark, read from the
    brokers' own logs in an embedded :class:`~minikafka.cluster.Cluster` (what no client sees)."""
    out: dict[int, dict[int, list[tuple[int, bytes]]]] = {}
    for partition in range(len(cluster.metadata.topics[topic].partitions)):
        state = cluster.partition_state(topic, partition)
        hw = state["high_watermark"] or 0
        out[partition] = {
            b: cluster.call(_read_replica, cluster, b, topic, partition, hw)
            for b in state["isr"]
            if b in cluster.live_brokers
        }
    return out


def _read_replica(cluster: Any, broker: int, topic: str, partition: int, hw: int) -> list[tuple[int, bytes]]:
    log = cluster.brokers[broker].partitions[(topic, partition)].log
    records: list[tuple[int, bytes]] = []
    for header, batch in log.batches(log.log_start_offset):
        if header.is_control:
            continue
        records.extend((r.offset, r.value or b"") for r in iter_records(batch) if r.offset < hw)
    return records
