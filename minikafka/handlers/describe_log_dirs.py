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

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest

from ..errors import ErrorCode
from .context import RequestContext, Response

IN_MEMORY_LOG_DIR = "/in-memory/broker-{node_id}"  # the one directory a broker kept in memory reports

Row = tuple[Path, str, int, int, int, bool]  # log dir, topic, partition, size, lag, is_future


def _replicas(ctx: RequestContext, wanted: dict[str, set[int]] | None, virtual: Path | None) -> Iterator[Row]:
    """(log dir, topic, partition, size, lag, is_future) for each replica asked for; a log
    kept in memory is placed in the ``virtual`` directory."""
    broker = ctx.broker
    for (topic, index), part in sorted(broker.partitions.items()):
        if wanted is not None and index not in wanted.get(topic, ()):
            continue
        root = part.log.directory.parent if part.log.directory is not None else virtual
        if root is None:
            continue
        lag = max(part.high_watermark - part.log_end_offset, 0)
        yield root, topic, index, part.log.size_bytes(), lag, False
        move = broker.log_dir_moves.get((topic, index))
        if move is not None:
            yield move.destination, topic, index, move.size_bytes(), move.lag, True


def _result(ctx: RequestContext, root: Path, space: tuple[int, int], offline: bool, rows: list[Row]) -> Any:
    total, usable = (-1, -1) if offline else space
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
    wanted: dict[str, set[int]] | None = (
        None if request.topics is None else {t.topic: set(t.partitions) for t in request.topics})
    if dirs is None:
        virtual = Path(IN_MEMORY_LOG_DIR.format(node_id=ctx.broker.node_id))
        rows = list(_replicas(ctx, wanted, virtual))
        return ctx.respond(error_code=ErrorCode.none, results=(_result(ctx, virtual, (-1, -1), False, rows),))
    rows = list(_replicas(ctx, wanted, None))
    return ctx.respond(error_code=ErrorCode.none, results=tuple(
        _result(ctx, root, dirs.space(root), root in dirs.offline, [r for r in rows if r[0] == root])
        for root in dirs.roots))
