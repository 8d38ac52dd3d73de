"""DeleteTopics: remove topics and their data from every broker."""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ..metadata import INTERNAL_TOPICS
from ..security.acl import Operation, ResourceType


def _names(request) -> list[str]:
    return list(request.topic_names)


def _delete(ctx, name: str):
    broker = ctx.broker
    try:
        if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name):
            raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to delete topic {name!r}.")
        if not broker.config["delete.topic.enable"]:
            raise KafkaError(ErrorCode.topic_deletion_disabled, "delete.topic.enable is false on this broker.")
        if name in INTERNAL_TOPICS:
            raise KafkaError(ErrorCode.invalid_request, f"{name} is an internal topic and cannot be deleted.")
        broker.delete_topic(name)
        code, message = ErrorCode.none, None
    except KafkaError as e:
        code, message = e.code, e.message
    return ctx.make("DeletableTopicResult", name=name, error_code=code, error_message=message)


async def handle(ctx, request):
    return ctx.respond(responses=tuple(_delete(ctx, n) for n in _names(request)))
