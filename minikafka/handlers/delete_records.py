"""DeleteRecords: move a partition's log start offset forward (``kafka-delete-records.sh``).

Records below the new log start offset can no longer be read; whole segments below
it are deleted from disk. Offset -1 means "up to the high watermark".
"""

from __future__ import annotations

from typing import Any

from kio.schema.delete_records.v2.request import DeleteRecordsPartition, DeleteRecordsRequest

from ..errors import ErrorCode, KafkaError
from ..metadata import INTERNAL_TOPICS
from ..security.acl import Operation, ResourceType
from .context import RequestContext, Response


def _delete(ctx: RequestContext, topic: str, p: DeleteRecordsPartition) -> Any:
    try:
        if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, topic):
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if topic in INTERNAL_TOPICS:  # it would erase committed offsets or transaction states
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot delete records of internal topic {topic}.")
        part = ctx.broker.leader_replica(topic, p.partition_index)
        offset = part.high_watermark if p.offset == -1 else p.offset
        if offset < 0 or offset > part.high_watermark:
            raise KafkaError(ErrorCode.offset_out_of_range,
                             f"Offset {offset} is past the high watermark {part.high_watermark}.")
        low = part.log.delete_records_before(offset)
        code = ErrorCode.none
    except KafkaError as e:
        low, code = -1, e.code
    return ctx.make("DeleteRecordsPartitionResult", partition_index=p.partition_index, low_watermark=low,
                    error_code=code)


async def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> Response:
    topics = tuple(ctx.make("DeleteRecordsTopicResult", name=t.name,
                            partitions=tuple(_delete(ctx, t.name, p) for p in t.partitions))
                   for t in request.topics)
    return ctx.respond(topics=topics)
