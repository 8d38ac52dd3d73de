"""The storage layer: each partition is a log of segment files with sparse indexes.

``PartitionLog`` is what the broker uses; ``segment``, ``index``, ``store`` and
``cleaner`` are its parts (segments on disk, offset/time indexes, byte storage,
retention and compaction).
"""

from .errors import LogError, OffsetOutOfRange, UnexpectedAppendOffset
from .partition_log import AppendResult, PartitionLog

__all__ = ["AppendResult", "LogError", "OffsetOutOfRange", "PartitionLog", "UnexpectedAppendOffset"]
