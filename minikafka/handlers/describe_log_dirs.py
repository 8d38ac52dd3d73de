"""DescribeLogDirs (KIP-113): this broker's log directories, their partitions and sizes.

For each directory of ``log.dirs``: the partitions it holds with their size (the bytes of
their segment files), the offset lag as Kafka computes it (for a current log, how far its
end is below its high watermark, so 0; for a future log that AlterReplicaLogDirs is
filling, how far it is behind the current one) and whether it is that future log, plus
the file system's total and usable bytes. An offline directory is listed with
KAFKA_STORAGE_ERROR. A null topic list means every partition. A broker kept in memory
has no log directories.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest

from ..errors import ErrorCode
from ..log.dirs import LogDirs
from .context import RequestContext, Response

Row = tuple[Path, str, int, int, int, bool]  # log dir, topic, partition, size, lag, is_future


def _replicas(ctx: RequestContext, wanted: dict[str, set[int]] | None) -> Iterator[Row]:
    """(log dir, topic, partition, size, lag, is_future) for each replica asked for."""
    broker = ctx.broker
    for (topic, index), part in sorted(broker.partitions.items()):
        if part.log.directory is None or (wanted is not None and index not in wanted.get(topic, ())):
            continue
        lag = max(part.high_watermark - part.log_end_offset, 0)
        yield part.log.directory.parent, topic, index, part.log.size_bytes(), lag, False
        move = broker.log_dir_moves.get((topic, index))
        if move is not None:
            yield move.destination, topic, index, move.size_bytes(), move.lag, True


def _result(ctx: RequestContext, dirs: LogDirs, root: Path, offline: bool, rows: list[Row]) -> Any:
    total, usable = (-1, -1) if offline else dirs.space(root)
    by_topic: dict[str, list] = {}
    for _, topic, index, size, lag, future in rows:
        by_topic.setdefault(topic, []).append(ctx.make("DescribeLogDirsPartition", partition_index=index,
                                                       partition_size=size, offset_lag=lag, is_future_key=future))
    return ctx.make("DescribeLogDirsResult", error_code=ErrorCode.kafka_storage_error if offline else ErrorCode.none,
                    log_dir=str(root), total_bytes=total, usable_bytes=usable,
                    topics=tuple(ctx.make("DescribeLogDirsTopic", name=t, partitions=tuple(ps))
                                 for t, ps in by_topic.items()))


async def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> Response:
    dirs = ctx.broker.log_dirs
    if dirs is None:
        return ctx.respond(error_code=ErrorCode.none, results=())
    wanted: dict[str, set[int]] | None = (
        None if request.topics is None else {t.topic: set(t.partitions) for t in request.topics})
    rows = list(_replicas(ctx, wanted))
    return ctx.respond(error_code=ErrorCode.none, results=tuple(
        _result(ctx, dirs, root, root in dirs.offline, [r for r in rows if r[0] == root]) for root in dirs.roots))
