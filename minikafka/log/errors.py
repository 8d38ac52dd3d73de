"""What can go wrong when the broker asks the log for offsets it does not hold.

The protocol layer maps these to Kafka error codes: ``OffsetOutOfRange`` becomes
OFFSET_OUT_OF_RANGE (1) for Fetch, ListOffsets and DeleteRecords.
"""

from __future__ import annotations


class LogError(Exception):
    """Base of the partition log's errors."""


class OffsetOutOfRange(LogError):
    """The offset is below the log start offset or past the log end offset."""

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int, what: str = "offset"):
        super().__init__(
            f"{what} {offset} is out of range: the log holds offsets "
            f"{log_start_offset} (log start offset) to {log_end_offset} (log end offset)"
        )
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class UnexpectedAppendOffset(LogError):
    """A follower tried to append a batch below the log end offset (offsets must grow)."""
