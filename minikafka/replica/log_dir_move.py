"""Moving a replica to another log directory (AlterReplicaLogDirs, KIP-113).

Kafka does not stop a partition to move it between disks. It creates a *future* log in
the destination directory, copies the current log into it batch by batch (its
ReplicaAlterLogDirsThread) while the replica keeps serving, and when the future log has
caught up it takes the current log's place in one step and the old files are deleted.
DescribeLogDirs shows the future log meanwhile (``is_future_key``, with its lag behind the
current one). A move is lost if the broker stops before it completes (Kafka resumes it).
"""

from __future__ import annotations

import logging
from pathlib import Path

from .. import records
from ..log import PartitionLog
from ..log.dirs import LogDirs, future_name
from .partition import Partition

log = logging.getLogger("minikafka.log")

COPY_BYTES = 1 << 20  # per step, so a large log never holds the event loop for long


class LogDirMove:
    """One replica's future log in its destination directory."""

    def __init__(self, part: Partition, destination: Path):
        self.part, self.destination = part, destination
        self.path = destination / future_name(part.topic, part.index)
        self.future = PartitionLog(self.path, part.config, topic=part.topic, partition=part.index)
        self.future.reset_to(part.log_start_offset)

    @property
    def lag(self) -> int:
        """How many offsets the future log is behind the current one."""
        return max(0, self.part.log_end_offset - self.future.log_end_offset)

    def size_bytes(self) -> int:
        return self.future.size_bytes()

    def copy_some(self, max_bytes: int = COPY_BYTES) -> bool:
        """Copy the next batches from the current log; True once the future log has them all."""
        current, future = self.part.log, self.future
        if future.log_end_offset > current.log_end_offset:  # the current log was truncated
            future.truncate_to(current.log_end_offset)
        if future.log_end_offset < current.log_start_offset:  # retention removed what was not copied
            future.reset_to(current.log_start_offset)
        if future.log_end_offset >= current.log_end_offset:
            return True
        data = current.read(future.log_end_offset, max_bytes)
        if data:
            future.append(records.split_batches(data), assign_offsets=False)
        return future.log_end_offset >= current.log_end_offset

    def finish(self) -> None:
        """Swap: the future log becomes the replica's log; the old directory is deleted."""
        while not self.copy_some():
            pass
        old, future = self.part.log, self.future
        if old.log_start_offset > future.log_start_offset:  # DeleteRecords or retention after the copy
            future.high_watermark = future.log_end_offset
            future.delete_records_before(old.log_start_offset)
        old.flush()
        old.close()
        future.close()
        final = self.destination / f"{self.part.topic}-{self.part.index}"
        self.path.rename(final)
        new = PartitionLog(final, self.part.config, topic=self.part.topic, partition=self.part.index)
        new.high_watermark = old.high_watermark
        self.part.log = new
        if old.directory is not None:
            LogDirs.remove(old.directory)
        log.info("%s-%d moved to log directory %s", self.part.topic, self.part.index, self.destination)

    def abandon(self) -> None:
        self.future.close()
        LogDirs.remove(self.path)
