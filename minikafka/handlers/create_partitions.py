"""CreatePartitions: add partitions to a topic (they can never be removed).

Adding partitions changes where keys land (``murmur2(key) % partitions``): the reason
the course warns against it for keyed topics.
"""

from __future__ import annotations

from typing import Any

from kio.schema.create_partitions.v3.request import CreatePartitionsRequest, CreatePartitionsTopic

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from .context import RequestContext, Response


def _grow(ctx: RequestContext, t: CreatePartitionsTopic, validate_only: bool) -> Any:
    try:
        if not ctx.allowed(Operation.ALTER, ResourceType.TOPIC, t.name):
            raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to alter topic {t.name!r}.")
        assignments: list[list[int]] | None = (
            None if t.assignments is None else [list(a.broker_ids) for a in t.assignments])
        ctx.broker.add_partitions(t.name, t.count, validate_only, assignments)
        code, message = ErrorCode.none, None
    except KafkaError as e:
        code, message = e.code, e.message
    return ctx.make("CreatePartitionsTopicResult", name=t.name, error_code=code, error_message=message)


async def handle(ctx: RequestContext, request: CreatePartitionsRequest) -> Response:
    return ctx.respond(results=tuple(_grow(ctx, t, request.validate_only) for t in request.topics))
