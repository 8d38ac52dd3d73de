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
from .ports import Caller, ReassignmentPort, Response


class AlterPartitionReassignments:
    """The AlterPartitionReassignments API over the broker's ``ReassignmentPort``."""

    def __init__(self, controller: ReassignmentPort) -> None:
        self.controller = controller

    async def handle(self, caller: Caller, request: AlterPartitionReassignmentsRequest) -> Response:
        allow = request.allow_replication_factor_change
        responses = tuple(caller.make("ReassignableTopicResponse", name=t.name,
                                      partitions=tuple(self._reassign(caller, t.name, p, allow) for p in t.partitions))
                          for t in request.topics)
        return caller.respond(error_code=ErrorCode.none, error_message=None, allow_replication_factor_change=allow,
                              responses=responses)

    def _reassign(self, caller: Caller, topic: str, p: ReassignablePartition, allow_rf_change: bool) -> Any:
        try:
            target: list[int] | None = None if p.replicas is None else list(p.replicas)
            self.controller.reassign_partition(topic, p.partition_index, target, allow_rf_change)
            code, message = ErrorCode.none, None
        except KafkaError as e:
            code, message = e.code, e.message
        return caller.make("ReassignablePartitionResponse", partition_index=p.partition_index, error_code=code,
                           error_message=message)
