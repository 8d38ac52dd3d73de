"""The ``__cluster_metadata`` log of one controller: Kafka record batches in one segment file.

Every batch carries the epoch of the leader that wrote it (``partitionLeaderEpoch``), which
is what KIP-595's Fetch compares to find where a follower's log diverged from the leader's.
The file is ``<log dir>/__cluster_metadata-0/00000000000000000000.log``, the name and
format Kafka uses, so ``minikafka dump-log`` prints it. Appends are flushed and fsynced
before they count: a vote or an acknowledgement must not outlive a crash that lost its
record. Without a directory the log lives in memory (the core's unit tests); ``read_only`` reads a
running controller's log without touching it.

After a snapshot (KIP-630, ``snapshots``) the log may start later: ``restart_at`` drops the
batches below the snapshot's end offset and renames the segment after its new base offset,
and the log remembers the snapshot's epoch as the epoch of its start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import records as kafka_records

SEGMENT = "00000000000000000000.log"
PARTITION_DIR = "__cluster_metadata-0"


@dataclass(frozen=True)
class BatchEntry:
    base_offset: int
    last_offset: int
    epoch: int
    position: int  # where the batch starts in the segment
    size: int


class MetadataLog:
    """An append-only log of record batches with per-batch leader epochs."""

    def __init__(self, log_dir: str | Path | None = None, *, read_only: bool = False):
        self._entries: list[BatchEntry] = []
        self._data = bytearray()
        self._file = None
        self.start_offset, self.start_epoch = 0, -1
        self.directory: Path | None = None
        if log_dir is not None:
            path = self.directory = Path(log_dir) / PARTITION_DIR
            path.mkdir(parents=True, exist_ok=True)
            segments = sorted(path.glob("*.log"))
            self.path = segments[-1] if segments else path / SEGMENT
            self.start_offset = int(self.path.stem)
            if self.start_offset:
                snapshot = next(iter(sorted(path.glob(f"{self.start_offset:020d}-*.checkpoint"))), None)
                self.start_epoch = int(snapshot.stem.split("-")[1]) if snapshot else -1
            self._data = bytearray(self.path.read_bytes() if self.path.exists() else b"")
            self._recover()
            if read_only:  # a tool or a test reading a running controller's log: never write it
                return
            self._file = open(self.path, "r+b" if self.path.exists() else "w+b")  # noqa: SIM115 - held open
            self._file.truncate(len(self._data))

    def _recover(self) -> None:
        """Index the batches on disk; a torn batch at the end (a crash mid-write) is cut off."""
        pos = 0
        while pos < len(self._data):
            try:
                size = kafka_records.BatchHeader.parse(memoryview(self._data), pos).size
                header = kafka_records.validate(memoryview(self._data)[pos : pos + size])
            except kafka_records.CorruptRecordError:
                break
            self._entries.append(
                BatchEntry(header.base_offset, header.last_offset, header.partition_leader_epoch, pos, header.size)
            )
            pos += header.size
        del self._data[pos:]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- what the log holds

    @property
    def end_offset(self) -> int:
        """The log end offset: the offset the next record gets."""
        return self._entries[-1].last_offset + 1 if self._entries else self.start_offset

    @property
    def last_epoch(self) -> int:
        """The epoch of the last batch (of the snapshot the log starts at; -1 for an empty log)."""
        return self._entries[-1].epoch if self._entries else self.start_epoch

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """The largest epoch <= ``epoch`` in the log and the offset where it ends (Kafka's
        ``endOffsetForEpoch``): the start of the next epoch, or the log end offset. (-1, 0)
        when the log has no such epoch."""
        found = (self.start_epoch, self.start_offset) if -1 < self.start_epoch <= epoch else (-1, self.start_offset)
        for entry in self._entries:
            if entry.epoch > epoch:
                return found[0], entry.base_offset if found[0] >= 0 else self.start_offset
            found = entry.epoch, entry.last_offset + 1
        return found

    def read(self, offset: int, max_bytes: int = 1 << 20) -> bytes:
        """The whole batches from ``offset`` on, at least one, at most about ``max_bytes``."""
        start = next((e for e in self._entries if e.last_offset >= offset >= self.start_offset), None)
        if start is None:
            return b""
        end = start.position
        for entry in self._entries[self._entries.index(start) :]:
            if end > start.position and end + entry.size - start.position > max_bytes:
                break
            end = entry.position + entry.size
        return bytes(self._data[start.position : end])

    def batches(self) -> list[bytes]:
        """Every batch, in order (tests and tools read the log this way)."""
        return [bytes(self._data[e.position : e.position + e.size]) for e in self._entries]

    # -- changing it

    def append_leader(self, records: list[kafka_records.Record], epoch: int, *, control: bool = False) -> int:
        """The leader appends one batch of new records in its epoch; returns its first offset."""
        base = self.end_offset
        for i, record in enumerate(records):
            record.offset = base + i
        self._write(kafka_records.build_batch(records, base_offset=base, partition_leader_epoch=epoch, control=control))
        return base

    def append_replicated(self, data: bytes) -> int:
        """A follower appends the batches a Fetch returned, from its log end offset on; returns
        how many it appended (a batch that does not start at the end is dropped, with the rest)."""
        count = 0
        for batch in kafka_records.split_batches(data, allow_partial=True):
            header = kafka_records.validate(batch)
            if header.base_offset != self.end_offset:
                break
            self._write(bytes(batch))
            count += 1
        return count

    def _write(self, batch: bytes) -> None:
        header = kafka_records.BatchHeader.parse(batch)
        self._entries.append(
            BatchEntry(
                header.base_offset, header.last_offset, header.partition_leader_epoch, len(self._data), len(batch)
            )
        )
        self._data += batch
        if self._file is not None:
            self._file.seek(self._entries[-1].position)
            self._file.write(batch)
            self._file.flush()
            os.fsync(self._file.fileno())

    def restart_at(self, offset: int, epoch: int) -> None:
        """Start the log at ``offset`` (a snapshot's end offset, of ``epoch``): the batches below it
        go, the segment is rewritten under its new base offset. Past the log's end: the log is emptied."""
        keep = [e for e in self._entries if e.base_offset >= offset] if offset <= self.end_offset else []
        data = b"".join(bytes(self._data[e.position : e.position + e.size]) for e in keep)
        self._entries, position = [], 0
        for e in keep:
            self._entries.append(BatchEntry(e.base_offset, e.last_offset, e.epoch, position, e.size))
            position += e.size
        self._data = bytearray(data)
        self.start_offset, self.start_epoch = offset, epoch
        if self._file is not None and self.directory is not None:
            old, self.path = self.path, self.directory / f"{offset:020d}.log"
            self._file.close()
            with open(self.path.with_suffix(".tmp"), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(self.path.with_suffix(".tmp"), self.path)
            if old != self.path:
                old.unlink(missing_ok=True)
            self._file = open(self.path, "r+b")  # noqa: SIM115 - held open

    def truncate_to(self, offset: int) -> None:
        """Drop every batch at or past ``offset`` (a follower whose log diverged from the leader's)."""
        keep = [e for e in self._entries if e.last_offset < offset]
        size = keep[-1].position + keep[-1].size if keep else 0
        self._entries = keep
        del self._data[size:]
        if self._file is not None:
            self._file.truncate(size)
            self._file.flush()
            os.fsync(self._file.fileno())
