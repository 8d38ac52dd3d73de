"""ListPartitionReassignments (KIP-455): the partitions whose replicas are moving.

Each ongoing reassignment shows the partition's whole replica set during the move, the
replicas being added (not yet caught up) and those to be removed when it completes. A
null topic list means every partition; partitions not moving are left out.
"""

from __future__ import annotations

from typing import Any

from kio.schema.list_partition_reassignments.v0.request import ListPartitionReassignmentsRequest

from ..errors import ErrorCode
from ..reassignment import in_progress
from .context import RequestContext, Response


def _wanted(ctx: RequestContext, request: ListPartitionReassignmentsRequest) -> list[tuple[str, set[int] | None]]:
    if request.topics is None:
        return [(name, None) for name in sorted(ctx.broker.metadata.topics)]
    return [(t.name, set(t.partition_indexes)) for t in request.topics]


def _ongoing(ctx: RequestContext, name: str, indexes: set[int] | None) -> Any:
    topic = ctx.broker.metadata.topics.get(name)
    moving = [p for p in (topic.partitions if topic else [])
              if in_progress(p) and (indexes is None or p.index in indexes)]
    if not moving:
        return None
    return ctx.make("OngoingTopicReassignment", name=name, partitions=tuple(
        ctx.make("OngoingPartitionReassignment", partition_index=p.index, replicas=tuple(p.replicas),
                 adding_replicas=tuple(p.adding_replicas), removing_replicas=tuple(p.removing_replicas))
        for p in moving))


async def handle(ctx: RequestContext, request: ListPartitionReassignmentsRequest) -> Response:
    topics = (_ongoing(ctx, name, indexes) for name, indexes in _wanted(ctx, request))
    return ctx.respond(error_code=ErrorCode.none, error_message=None, topics=tuple(t for t in topics if t))
