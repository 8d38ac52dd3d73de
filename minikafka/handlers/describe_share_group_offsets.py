"""DescribeShareGroupOffsets (KIP-932): where each share-partition of a group starts, and its lag.

What ``kafka-share-groups.sh --describe`` shows: the share-partition start offset (SPSO)
read from ``__share_group_state``, for the partitions asked or, when the request names
no topics, for every partition the group has read; v1 adds the lag, the records up to
the high watermark not yet acknowledged or archived. A partition the group never read
has start offset -1; an id that is not a share group is GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_share_group_offsets.v1.request import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
)

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._share import by_topic, topic_id
from .context import RequestContext, Response


def _high_watermark(ctx: RequestContext, topic: str, index: int) -> int | None:
    info = ctx.broker.metadata.topics.get(topic)
    if info is None or not 0 <= index < len(info.partitions):
        return None
    part = ctx.broker.peers.leader_replica(topic, info.partitions[index])
    return part.high_watermark if part is not None else None


def _partition(ctx: RequestContext, index: int, start: int, lag: int) -> Any:
    return ctx.make("DescribeShareGroupOffsetsResponsePartition", partition_index=index, start_offset=start,
                    leader_epoch=-1, lag=lag, error_code=ErrorCode.none)


def _group(ctx: RequestContext, g: DescribeShareGroupOffsetsRequestGroup) -> Any:
    wanted: dict[str, list[int]] | None = (
        None if g.topics is None else {t.topic_name: list(t.partitions) for t in g.topics})
    try:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, g.group_id):
            raise KafkaError(ErrorCode.group_authorization_failed)
        rows = ctx.broker.share_groups.start_offsets(g.group_id, wanted, lambda t, i: _high_watermark(ctx, t, i))
    except KafkaError as e:
        return ctx.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=(), error_code=e.code,
                        error_message=e.message)
    topics = tuple(ctx.make("DescribeShareGroupOffsetsResponseTopic", topic_name=t, topic_id=topic_id(ctx, t),
                            partitions=tuple(_partition(ctx, i, start, lag) for i, (start, lag) in parts))
                   for t, parts in by_topic({(t, i): (start, lag) for t, i, start, lag in rows}).items())
    return ctx.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=topics,
                    error_code=ErrorCode.none)


async def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequest) -> Response:
    return ctx.respond(groups=tuple(_group(ctx, g) for g in request.groups))
