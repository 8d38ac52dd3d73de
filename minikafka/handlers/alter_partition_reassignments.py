"""AlterPartitionReassignments (KIP-455): move partitions to other brokers, or cancel a move.

Each partition names its target replicas (null cancels the reassignment in progress).
The data really moves: the controller adds the new replicas, which fetch from the leader
until they join the ISR; then the old ones are removed and delete their files, and a
leader that was removed hands over to a target replica (``minikafka.reassignment``).
Errors are Kafka's: INVALID_REPLICA_ASSIGNMENT (empty, repeated or unknown brokers),
INVALID_REPLICATION_FACTOR (v1, when the request forbids changing it),
NO_REASSIGNMENT_IN_PROGRESS (a cancel with nothing to cancel), UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from kio.schema.alter_partition_reassignments.v1.request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
)

from ..errors import ErrorCode, KafkaError
from .context import RequestContext, Response


def _reassign(ctx: RequestContext, topic: str, p: ReassignablePartition, allow_rf_change: bool) -> Any:
    info = ctx.broker.metadata.topics.get(topic)
    try:
        if info is None or not 0 <= p.partition_index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{p.partition_index} does not exist.")
        target: list[int] | None = None if p.replicas is None else list(p.replicas)
        ctx.broker.controller.reassign(topic, info.partitions[p.partition_index], target, allow_rf_change)
        code, message = ErrorCode.none, None
    except KafkaError as e:
        code, message = e.code, e.message
    return ctx.make("ReassignablePartitionResponse", partition_index=p.partition_index, error_code=code,
                    error_message=message)


async def handle(ctx: RequestContext, request: AlterPartitionReassignmentsRequest) -> Response:
    allow = request.allow_replication_factor_change
    responses = tuple(ctx.make("ReassignableTopicResponse", name=t.name,
                               partitions=tuple(_reassign(ctx, t.name, p, allow) for p in t.partitions))
                      for t in request.topics)
    return ctx.respond(error_code=ErrorCode.none, error_message=None, allow_replication_factor_change=allow,
                       responses=responses)
