"""The log of one partition: an ordered list of segments and the offsets that bound it.

Three offsets describe a Kafka partition log:

* the **log start offset**, the first offset still held (retention, compaction of the
  first segment and DeleteRecords move it up);
* the **log end offset** (LEO), the offset the next appended record gets;
* the **high watermark**, up to which records are replicated enough for consumers to
  see; the broker sets it, and ``read`` callers pass it as ``max_offset``.

Appends go to the last, *active* segment and roll a new one when it reaches
``segment.bytes`` or ``segment.ms``. The same logic runs on a directory (one per
partition, like Kafka's ``topic-0/``) or, with ``directory=None``, purely in memory.
"""

from __future__ import annotations

import logging
import pathlib
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..clock import now_ms as clock_now_ms
from ..config import BrokerConfig, TopicConfig, validate_topic_configs
from ..records import BatchHeader, with_base_offset
from . import cleaner
from .errors import OffsetOutOfRange, UnexpectedAppendOffset
from .segment import Segment, parse_base_offset, with_log_append_time
from .store import write_atomically

log = logging.getLogger("minikafka.log")

LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
_MAX_RELATIVE_OFFSET = 2**31 - 1  # index entries hold offsets relative to the base as int32


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What a Produce response reports for a partition."""

    base_offset: int
    last_offset: int
    log_append_time: int  # the broker's timestamp with LogAppendTime, -1 with CreateTime
    log_start_offset: int


def _topic_config(config: TopicConfig | Mapping[str, Any]) -> TopicConfig:
    if isinstance(config, TopicConfig):
        return config  # live: AlterConfigs changes are seen by the next append
    return TopicConfig(BrokerConfig(), validate_topic_configs(config))


def _base_offset(segment: Segment) -> int:
    return segment.base_offset


class PartitionLog:
    """A partition's log; see the module docstring."""

    def __init__(
        self,
        directory: pathlib.Path | str | None,
        config: TopicConfig | Mapping[str, Any],
        *,
        topic: str = "",
        partition: int = 0,
        check_all: bool = False,
    ):
        self.directory = pathlib.Path(directory) if directory is not None else None
        self.config = _topic_config(config)
        self.topic, self.partition = topic, partition
        self.segments: list[Segment] = []
        start = self._recover(check_all) if self.directory is not None else 0
        if not self.segments:
            self.segments = [Segment.create(self.directory, start, clock_now_ms())]
        self.log_end_offset = self.active.next_offset
        self.log_start_offset = min(max(start, self.segments[0].base_offset), self.log_end_offset)
        self._high_watermark = self.log_end_offset

    def __repr__(self) -> str:
        return (
            f"<PartitionLog {self.topic}-{self.partition} log_start_offset={self.log_start_offset} "
            f"high_watermark={self.high_watermark} log_end_offset={self.log_end_offset} "
            f"segments={len(self.segments)}>"
        )

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        # A follower learns the leader's high watermark but cannot expose more than it holds.
        self._high_watermark = min(offset, self.log_end_offset)

    @property
    def _index_interval(self) -> int:
        return int(self.config["index.interval.bytes"])

    # -- recovery --------------------------------------------------------------------------

    def _recover(self, check_all: bool) -> int:
        """Open the segment files; return the checkpointed log start offset (0 if none).

        ``check_all`` (after an unclean shutdown): every segment is scanned with CRCs; the
        first one that had to be cut ends the log, and the segments after it are deleted,
        as Kafka's log recovery does.
        """
        assert self.directory is not None, "an in-memory log has nothing to recover"
        self.directory.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(self.directory)
        paths = sorted(p for p in self.directory.glob("*.log") if parse_base_offset(p) is not None)
        paths.sort(key=lambda p: parse_base_offset(p) or 0)
        self.segments = []
        for i, path in enumerate(paths):
            segment = Segment.open(path, index_interval=self._index_interval,
                                   active=check_all or path == paths[-1])
            self.segments.append(segment)
            if segment.truncated_bytes and i + 1 < len(paths):
                log.warning("%s-%d: a bad batch in %s; deleting the %d later segment(s) from offset %d",
                            self.topic, self.partition, path.name, len(paths) - i - 1, segment.next_offset)
                for later in paths[i + 1:]:
                    Segment.open(later, index_interval=self._index_interval, active=False).delete()
                break
        return self._read_log_start_checkpoint()

    def _read_log_start_checkpoint(self) -> int:
        assert self.directory is not None
        try:
            last_line = (self.directory / LOG_START_CHECKPOINT).read_text().split("\n")[2]
            return int(last_line.split()[-1])
        except (OSError, IndexError, ValueError):
            return 0

    def _checkpoint_log_start(self) -> None:
        """Persist the log start offset, which DeleteRecords can move inside a segment.

        Same text format as Kafka's log-start-offset-checkpoint (version, count, entries),
        kept in the partition directory so a partition is self-contained.
        """
        if self.directory is not None:
            text = f"0\n1\n{self.topic or '-'} {self.partition} {self.log_start_offset}\n"
            write_atomically(self.directory / LOG_START_CHECKPOINT, text.encode())

    # -- append ------------------------------------------------------------------------------

    def append(
        self,
        batches: Sequence[bytes | memoryview],
        *,
        append_time_ms: int | None = None,
        assign_offsets: bool = True,
    ) -> AppendResult:
        """Append validated v2 batches; see the module docstring for offsets and rolling.

        With ``assign_offsets`` (the leader) each batch gets the next offsets; without
        (a follower copying its leader) the batches keep theirs, which must not go back.
        """
        if not batches:
            raise ValueError("append needs at least one record batch")
        now = clock_now_ms() if append_time_ms is None else append_time_ms
        # A follower copies batches its leader already stamped; only the leader stamps.
        stamps = assign_offsets and self.config["message.timestamp.type"] == "LogAppendTime"
        log_append_time = now if stamps else -1
        first = self.log_end_offset
        for i, batch in enumerate(batches):
            header = self._append_one(batch, now, log_append_time, assign_offsets)
            if i == 0:
                first = header.base_offset
        return AppendResult(first, self.log_end_offset - 1, log_append_time, self.log_start_offset)

    def _append_one(
        self, batch: bytes | memoryview, now: int, log_append_time: int, assign: bool
    ) -> BatchHeader:
        if assign:
            batch = with_base_offset(batch, self.log_end_offset)
        elif (base := BatchHeader.parse(batch).base_offset) < self.log_end_offset:
            raise UnexpectedAppendOffset(
                f"batch at offset {base} is below the log end offset {self.log_end_offset}"
            )
        if log_append_time >= 0:
            batch = with_log_append_time(batch, log_append_time)
        header = BatchHeader.parse(batch)
        self._maybe_roll(header, now)
        self.active.append(batch, header, self._index_interval)
        self.log_end_offset = header.last_offset + 1
        return header

    def _maybe_roll(self, incoming: BatchHeader, now: int) -> None:
        active = self.active
        if active.size == 0:
            return  # an empty segment is never rolled
        too_big = active.size + incoming.size > self.config["segment.bytes"]
        too_old = active.age_ms(incoming.max_timestamp, now) > self.config["segment.ms"]
        too_far = incoming.last_offset - active.base_offset > _MAX_RELATIVE_OFFSET
        if too_big or too_old or too_far:
            self._roll_at(incoming.base_offset, now)

    def roll(self, *, now_ms: int | None = None) -> None:
        """Start a new active segment at the log end offset (nothing to do if the active
        one is empty). Retention never deletes the active segment, so call this first to
        let it go."""
        if self.active.size:
            self._roll_at(self.log_end_offset, clock_now_ms() if now_ms is None else now_ms)

    def _roll_at(self, base_offset: int, now: int) -> None:
        self.active.seal()
        self.segments.append(Segment.create(self.directory, base_offset, now))

    # -- read ----------------------------------------------------------------------------------

    def _check_offset(self, offset: int) -> None:
        if not self.log_start_offset <= offset <= self.log_end_offset:
            raise OffsetOutOfRange(offset, self.log_start_offset, self.log_end_offset)

    def _segment_index(self, offset: int) -> int:
        return max(bisect_right(self.segments, offset, key=_base_offset) - 1, 0)

    def read(self, offset: int, max_bytes: int, max_offset: int | None = None) -> bytes:
        """Whole batches from the one containing ``offset``, about ``max_bytes`` of them.

        At least one whole batch comes back if there is one, however big (KIP-74), and no
        batch starting at or after ``max_offset`` (the high watermark, or the last stable
        offset for read_committed consumers). Like Kafka, one read serves one segment.
        """
        self._check_offset(offset)
        if max_offset is not None and offset >= max_offset:
            return b""
        for i in range(self._segment_index(offset), len(self.segments)):
            segment = self.segments[i]
            position = segment.locate(offset)
            if position < segment.size:
                return segment.read_batches(position, max_bytes, max_offset)
        return b""

    def batches(self, start_offset: int = 0) -> Iterator[tuple[BatchHeader, bytes]]:
        """Every batch holding offsets >= ``start_offset``, in order, with its header."""
        first = self._segment_index(start_offset)
        for segment in list(self.segments[first:]):
            for _, header, batch in segment.iter_batches(segment.locate(start_offset)):
                yield header, batch

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record whose timestamp is >= ``timestamp_ms``."""
        for segment in self.segments:
            found = segment.find_timestamp(timestamp_ms, self.log_start_offset)
            if found is not None:
                return found
        return None

    # -- removing data ---------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop every offset >= ``offset`` (a follower diverged from its leader).

        Batches are not split: a batch straddling ``offset`` goes whole, so the log end
        offset becomes the end of the last batch kept.
        """
        if offset >= self.log_end_offset:
            return
        if offset < self.log_start_offset:
            self.reset_to(offset)
            return
        while len(self.segments) > 1 and self.active.base_offset >= offset:
            self.segments.pop().delete()
        active = self.active
        active.truncate(active.locate(offset), self._index_interval)
        self.log_end_offset = active.next_offset
        if self.log_end_offset < self.log_start_offset:
            self.reset_to(offset)
        self._high_watermark = min(self._high_watermark, self.log_end_offset)

    def reset_to(self, offset: int) -> None:
        """Empty the log and start it again at ``offset``."""
        self.log_start_offset = self.log_end_offset = self._high_watermark = offset
        self._checkpoint_log_start()  # first: a crash before the new segment exists restarts here
        for segment in self.segments:
            segment.delete()
        self.segments = [Segment.create(self.directory, offset, clock_now_ms())]

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: make ``offset`` the log start offset (-1 means the high watermark)."""
        if offset == -1:
            offset = self.high_watermark
        if not 0 <= offset <= self.high_watermark:
            raise OffsetOutOfRange(offset, self.log_start_offset, self.high_watermark, "DeleteRecords offset")
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            below = sum(1 for s in self.segments[:-1] if s.next_offset <= offset)
            self._delete_oldest(below)
            self._checkpoint_log_start()
        return self.log_start_offset

    def _delete_oldest(self, count: int) -> None:
        for segment in self.segments[:count]:
            segment.delete()
        del self.segments[:count]
        self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)

    def apply_retention(self, now_ms: int) -> int:
        """Delete old segments per retention.ms / retention.bytes; return how many went."""
        if not self.config.deletes:
            return 0
        retention_ms = int(self.config["retention.ms"])
        active = self.active
        if (active.size and retention_ms >= 0 and now_ms - active.largest_timestamp() > retention_ms
                and self.log_end_offset <= self.high_watermark):
            self.roll(now_ms=now_ms)  # as Kafka does: an expired active segment is rolled, then deleted
        count = cleaner.retention_prefix(
            self.segments,
            now_ms=now_ms,
            retention_ms=int(self.config["retention.ms"]),
            retention_bytes=int(self.config["retention.bytes"]),
            high_watermark=self.high_watermark,
            log_start_offset=self.log_start_offset,
        )
        if count:
            self._delete_oldest(count)
            self._checkpoint_log_start()
        return count

    def compact(self, now_ms: int) -> int:
        """Log compaction of the non-active segments; return the number of records removed."""
        if not self.config.compacted:
            return 0
        dirty = cleaner.cleanable_segments(
            self.segments,
            now_ms=now_ms,
            min_lag_ms=int(self.config["min.compaction.lag.ms"]),
            high_watermark=self.high_watermark,
        )
        removed = cleaner.compact_segments(
            dirty,
            now_ms=now_ms,
            delete_retention_ms=int(self.config["delete.retention.ms"]),
            log_end_offset=self.log_end_offset,
            index_interval=self._index_interval,
        )
        self._drop_empty_segments()
        return removed

    def _drop_empty_segments(self) -> None:
        """Delete segments compaction emptied; the first stays so the log start offset does."""
        last = len(self.segments) - 1
        keep = [s for i, s in enumerate(self.segments) if s.size or i in (0, last)]
        for segment in self.segments:
            if segment not in keep:
                segment.delete()
        self.segments = keep

    # -- facts and lifecycle ---------------------------------------------------------------------

    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def segments_info(self) -> list[dict]:
        """One dict per segment, oldest first: base_offset, size, path, first_timestamp
        (the first batch's), last_offset, max_timestamp and index entry counts."""
        return [s.info() for s in self.segments]

    def flush(self) -> None:
        """fsync the segment files (appends only reach the OS page cache)."""
        for segment in self.segments:
            segment.flush()

    def close(self) -> None:
        """Persist the active segment's indexes and close the files."""
        if self.segments:
            self.active.seal()
        for segment in self.segments:
            segment.close()


def _remove_leftovers(directory: pathlib.Path) -> None:
    """Files a crash can leave behind: half-written replacements and orphaned indexes."""
    for path in directory.glob("*.cleaned"):
        path.unlink(missing_ok=True)
    for suffix in ("*.index", "*.timeindex"):
        for path in directory.glob(suffix):
            if not path.with_suffix(".log").exists():
                path.unlink(missing_ok=True)
