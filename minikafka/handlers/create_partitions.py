"""CreatePartitions: add partitions to a topic (they can never be removed).

Adding partitions changes where keys land (``murmur2(key) % partitions``): the reason
the course warns against it for keyed topics.
"""

from __future__ import annotations

from typing import Any

from kio.schema.create_partitions.v3.request import CreatePartitionsRequest, CreatePartitionsTopic

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from . import _topics
from .ports import Caller, Response


def error_response(caller: Caller, request: CreatePartitionsRequest, code: ErrorCode) -> Response:
    """Every topic refused with ``code``, nothing added (the fault API, or an unforwarded request)."""
    return caller.respond(results=tuple(
        caller.make("CreatePartitionsTopicResult", name=t.name, error_code=code, error_message=code.name)
        for t in request.topics))


class CreatePartitions(_topics.TopicsHandler):
    async def handle(self, caller: Caller, request: CreatePartitionsRequest) -> Response:
        return caller.respond(results=tuple(self._grow(caller, t, request.validate_only) for t in request.topics))

    def _grow(self, caller: Caller, t: CreatePartitionsTopic, validate_only: bool) -> Any:
        try:
            if not caller.allowed(Operation.ALTER, ResourceType.TOPIC, t.name):
                raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to alter topic {t.name!r}.")
            assignments: list[list[int]] | None = (
                None if t.assignments is None else [list(a.broker_ids) for a in t.assignments])
            self.topics.add_partitions(t.name, t.count, validate_only, assignments)
            code, message = ErrorCode.none, None
        except KafkaError as e:
            code, message = e.code, e.message
        return caller.make("CreatePartitionsTopicResult", name=t.name, error_code=code, error_message=message)
