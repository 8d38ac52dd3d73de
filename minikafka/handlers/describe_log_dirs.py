"""DescribeLogDirs (KIP-113): this broker's log directories, their partitions and sizes.

For each directory of ``log.dirs``: the partitions it holds with their size (the bytes of
their segment files), the offset lag as Kafka computes it (for a current log, how far its
end is below its high watermark, so 0; for a future log that AlterReplicaLogDirs is
filling, how far it is behind the current one) and whether it is that future log, plus
the file system's total and usable bytes. An offline directory is listed with
KAFKA_STORAGE_ERROR. A null topic list means every partition. A broker kept in memory
answers as a Kafka broker with one log directory would: one virtual directory
(``IN_MEMORY_LOG_DIR``) holding every replica with its size in bytes, and the volume's
total and usable bytes unknown (-1, Kafka's UNKNOWN_VOLUME_BYTES).
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest

from ..errors import ErrorCode
from .ports import Caller, LogDirsPort, Placement, Response

IN_MEMORY_LOG_DIR = "/in-memory/broker-{node_id}"  # the one directory a broker kept in memory reports


def _wanted(rows: list[Placement], wanted: dict[str, set[int]] | None) -> list[Placement]:
    return [r for r in rows if wanted is None or r[2] in wanted.get(r[1], ())]


def _result(caller: Caller, root: str, space: tuple[int, int], offline: bool, rows: list[Placement]) -> Any:
    total, usable = (-1, -1) if offline else space
    by_topic: dict[str, list[Any]] = {}
    for _, topic, index, size, lag, future in rows:
        by_topic.setdefault(topic, []).append(caller.make("DescribeLogDirsPartition", partition_index=index,
                                                          partition_size=size, offset_lag=lag, is_future_key=future))
    return caller.make("DescribeLogDirsResult",
                       error_code=ErrorCode.kafka_storage_error if offline else ErrorCode.none,
                       log_dir=root, total_bytes=total, usable_bytes=usable,
                       topics=tuple(caller.make("DescribeLogDirsTopic", name=t, partitions=tuple(ps))
                                    for t, ps in by_topic.items()))


class DescribeLogDirs:
    """The DescribeLogDirs API over the broker's ``LogDirsPort``."""

    def __init__(self, log_dirs: LogDirsPort) -> None:
        self.log_dirs = log_dirs

    async def handle(self, caller: Caller, request: DescribeLogDirsRequest) -> Response:
        dirs = self.log_dirs.log_dir_states()
        wanted: dict[str, set[int]] | None = (
            None if request.topics is None else {t.topic: set(t.partitions) for t in request.topics})
        rows = _wanted(self.log_dirs.replica_placements(), wanted)
        if dirs is None:  # every log in memory: one virtual directory holds them
            virtual = IN_MEMORY_LOG_DIR.format(node_id=self.log_dirs.node_id)
            rows = [(virtual, topic, index, size, lag, future) for root, topic, index, size, lag, future in rows
                    if root is None]
            return caller.respond(error_code=ErrorCode.none, results=(_result(caller, virtual, (-1, -1), False, rows),))
        return caller.respond(error_code=ErrorCode.none, results=tuple(
            _result(caller, root, (total, usable), offline, [r for r in rows if r[0] == root])
            for root, total, usable, offline in dirs))
