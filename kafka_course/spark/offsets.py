"""Offset arithmetic for the Spark Kafka source: plain functions over plain data.

A position in a set of partitions is a dict ``{(topic, partition): offset}``, where the
offset is the *next* record to read (Kafka's convention: a range ``[from, until)``).
Spark stores source offsets as JSON in its checkpoint, in the shape Spark's own Kafka
connector uses, ``{"fakeusers": {"0": 12, "1": 7}}``; ``to_json``/``from_json``
convert between the two.

What is decided here, without any network or Spark:

* ``limit_offsets``: how far one micro-batch may go under ``maxOffsetsPerTrigger``,
  shared among partitions in proportion to what each has waiting;
* ``plan_ranges``: the per-partition ``[from, until)`` ranges a batch reads, split into
  more Spark tasks when ``minPartitions`` asks for it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

TopicPartition = tuple[str, int]
Offsets = dict[TopicPartition, int]

# The logical offsets Spark's JSON offset specs use.
EARLIEST, LATEST = -2, -1


@dataclass(frozen=True)
class OffsetRange:
    """The records ``[from_offset, until_offset)`` of one partition: one Spark task's work."""
    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def size(self) -> int:
        return max(0, self.until_offset - self.from_offset)


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    """``{("t", 0): 5}`` -> ``{"t": {"0": 5}}`` (sorted, so equal positions give equal JSON)."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def from_json(data: dict) -> Offsets:
    """The inverse of ``to_json``; rejects anything that is not topic -> partition -> offset."""
    if not isinstance(data, dict):
        raise ValueError(f"offsets must be a JSON object of topic -> {{partition: offset}}, not {data!r}")
    out: Offsets = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, dict):
            raise ValueError(f"the offsets of topic {topic!r} must be an object like {{\"0\": 23}}, not {partitions!r}")
        for partition, offset in partitions.items():
            try:
                out[(topic, int(partition))] = int(offset)
            except (TypeError, ValueError):
                raise ValueError(f"topic {topic!r}: partition {partition!r} and offset {offset!r} "
                                 "must both be whole numbers") from None
    return out


def resolve(spec: str | Offsets, earliest: Offsets, latest: Offsets, *, what: str = "startingOffsets") -> Offsets:
    """Turn ``"earliest"``, ``"latest"`` or a per-partition spec into real offsets.

    In a per-partition spec -2 means earliest and -1 latest, as in Spark. Partitions the
    spec leaves out start at earliest (what Spark does for partitions found later too).
    """
    if spec == "earliest":
        return dict(earliest)
    if spec == "latest":
        return dict(latest)
    if isinstance(spec, str):
        raise ValueError(f'{what} must be "earliest", "latest" or per-partition offsets, not {spec!r}.')
    unknown = sorted(set(spec) - set(latest))
    if unknown:
        names = ", ".join(f"{t}-{p}" for t, p in unknown)
        raise ValueError(f"{what} names partition(s) {names} that do not exist (or are not subscribed).")
    out = dict(earliest)
    for tp, offset in spec.items():
        out[tp] = earliest[tp] if offset == EARLIEST else latest[tp] if offset == LATEST else offset
    return out


def limit_offsets(start: Offsets, latest: Offsets, max_records: int | None) -> Offsets:
    """The end of the next batch: ``latest``, or less so that at most ``max_records`` are read.

    The allowance is shared in proportion to each partition's backlog; what rounding
    leaves over goes to the partitions with the most left, so a batch reads exactly
    ``min(max_records, backlog)`` records and a slow partition is never starved.
    """
    begin = {tp: start.get(tp, latest[tp]) for tp in latest}
    backlog = {tp: max(0, latest[tp] - begin[tp]) for tp in latest}
    total = sum(backlog.values())
    if max_records is None or total <= max_records:
        return {tp: max(begin[tp], latest[tp]) for tp in latest}
    share = {tp: backlog[tp] * max_records // total for tp in latest}
    leftover = max_records - sum(share.values())
    for tp in sorted(latest, key=lambda tp: (share[tp] - backlog[tp], tp))[:leftover]:
        share[tp] += 1  # fewest records granted relative to backlog first
    return {tp: begin[tp] + share[tp] for tp in latest}


def plan_ranges(start: Offsets, end: Offsets, min_partitions: int | None = None) -> list[OffsetRange]:
    """The non-empty ranges between two positions, one per partition, or more if asked.

    With ``min_partitions`` larger than the number of partitions with data, big ranges
    are cut into equal pieces (in proportion to their size) so more tasks share the work.
    """
    ranges = [OffsetRange(t, p, start[(t, p)], end[(t, p)]) for (t, p) in sorted(end)
              if (t, p) in start and end[(t, p)] > start[(t, p)]]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    out: list[OffsetRange] = []
    for r in ranges:
        pieces = min(r.size, max(1, math.ceil(r.size * min_partitions / total)))
        bounds = [r.from_offset + r.size * i // pieces for i in range(pieces + 1)]
        out += [OffsetRange(r.topic, r.partition, a, b) for a, b in itertools.pairwise(bounds)]
    return out
