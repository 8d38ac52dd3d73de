"""Was a topic written in transactions? Look at its record batches, or at the offsets they leave.

A transactional producer marks every batch it writes as transactional (bit 4 of the
batch attributes), and the coordinator ends each transaction with a control batch, a
commit or abort marker, in every partition the transaction wrote to (KIP-98). A plain
producer, idempotent or not, writes neither. So:

* on minikafka, ``written(topic)`` reads the leader's segment files and counts the data
  batches, how many of them are transactional, and the markers;
* on any cluster, a marker takes an offset that no consumer ever receives, so the
  offsets a ``read_uncommitted`` consumer does not get are the markers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Written:
    """How a topic's records were written."""
    data_batches: int
    transactional_batches: int  # data batches written by a transactional producer
    markers: int  # control records (commit or abort), one per transaction and partition
    how: str  # "segments" (batch headers read on minikafka) or "offsets" (the gaps markers leave)

    @property
    def in_transactions(self) -> bool:
        if self.how == "offsets":
            return self.markers > 0
        return self.data_batches > 0 and self.transactional_batches == self.data_batches and self.markers > 0


def written(bootstrap: str, topic: str) -> Written:
    """Count data batches, transactional ones and markers, the most precise way the cluster allows."""
    from ..handle import cluster
    handle = cluster(bootstrap)
    if handle.is_minikafka:
        paths = [s.get("path") for segments in handle.embedded.segments(topic).values() for s in segments]
        if paths and all(paths):
            return _from_segments([Path(p) for p in paths if p is not None])  # all(paths): none is None
    return _from_offsets(bootstrap, topic)


def _from_segments(paths: list[Path]) -> Written:
    from minikafka.api import BatchHeader, split_batches
    data = transactional = markers = 0
    for path in paths:
        for batch in split_batches(path.read_bytes(), allow_partial=True):
            header = BatchHeader.parse(batch)
            if header.is_control:
                markers += header.record_count
            else:
                data += 1
                transactional += header.is_transactional
    return Written(data, transactional, markers, "segments")


def _from_offsets(bootstrap: str, topic: str) -> Written:
    from ..clients import offsets
    from ..guarantees import read_topic
    seen = read_topic(bootstrap, topic, "read_uncommitted", timeout=20)
    span = sum(o.high_watermark - o.log_start_offset for o in offsets(topic, bootstrap=bootstrap))
    return Written(len(seen), 0, span - len(seen), "offsets")
