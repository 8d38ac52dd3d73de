"""ListOffsets: find an offset by time, or the start or end of a partition.

Timestamp -2 asks for the log start offset (earliest), -1 for the end: the high
watermark, or the last stable offset for ``read_committed`` consumers; -3 for the
record with the largest timestamp (KIP-734); -4 for the earliest offset kept on the
broker's own disk (KIP-405; without tiered storage, the log start offset) and -5 for the
latest offset in tiered storage (KIP-1005; none here, so -1). v11 (Kafka 4.2, KIP-1023)
adds -6, the earliest offset still waiting to be copied to tiered storage: with no tiered
storage nothing waits, so -1 as well. Any other value finds the first record whose
timestamp is at or after it.
"""

from __future__ import annotations

from typing import Any

from kio.schema.list_offsets.v11.request import ListOffsetsPartition, ListOffsetsRequest

from .. import records
from ..errors import ErrorCode, KafkaError
from ..replica.partition import Partition
from ..security.acl import Operation, ResourceType
from .context import RequestContext, Response

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
EARLIEST_PENDING_UPLOAD = -6  # v11+


def _lookup(part: Partition, timestamp: int, committed: bool) -> tuple[int, int]:
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, part.log_start_offset
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1
    if timestamp == LATEST:
        return -1, part.last_stable_offset if committed else part.high_watermark
    if timestamp == MAX_TIMESTAMP:
        return _max_timestamp(part)
    found = part.log.offset_for_timestamp(timestamp)
    if found is None or found[0] >= part.high_watermark:
        return -1, -1
    return found[1], found[0]


def _max_timestamp(part: Partition) -> tuple[int, int]:
    """(timestamp, offset) of the first record carrying the largest timestamp (a scan: rare)."""
    best = None
    for header, batch in part.log.batches(part.log_start_offset):
        if header.base_offset >= part.high_watermark:
            break
        if not header.is_control and (best is None or header.max_timestamp > best[0].max_timestamp):
            best = (header, batch)
    if best is None:
        return -1, -1
    record = next(r for r in records.iter_records(best[1]) if r.timestamp == best[0].max_timestamp)
    return record.timestamp, record.offset


def _partition(ctx: RequestContext, topic: str, p: ListOffsetsPartition, committed: bool) -> Any:
    try:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
            raise KafkaError(ErrorCode.topic_authorization_failed)
        part = ctx.broker.leader_replica(topic, p.partition_index)
        ts, offset = _lookup(part, p.timestamp, committed)
        code, epoch = ErrorCode.none, part.leader_epoch
    except KafkaError as e:
        ts, offset, code, epoch = -1, -1, e.code, -1
    return ctx.make("ListOffsetsPartitionResponse", partition_index=p.partition_index, error_code=code,
                    timestamp=ts, offset=offset, leader_epoch=epoch)


def error_response(ctx: RequestContext, request: ListOffsetsRequest, code: ErrorCode) -> Response:
    """The fault API's answer: every requested partition fails with ``code``."""
    topics = tuple(
        ctx.make("ListOffsetsTopicResponse", name=t.name, partitions=tuple(
            ctx.make("ListOffsetsPartitionResponse", partition_index=p.partition_index, error_code=code,
                     timestamp=-1, offset=-1, leader_epoch=-1) for p in t.partitions))
        for t in request.topics)
    return ctx.respond(topics=topics)


async def handle(ctx: RequestContext, request: ListOffsetsRequest) -> Response:
    committed = request.isolation_level == 1
    topics = tuple(
        ctx.make("ListOffsetsTopicResponse", name=t.name,
                 partitions=tuple(_partition(ctx, t.name, p, committed) for p in t.partitions))
        for t in request.topics)
    return ctx.respond(topics=topics)
