"""DeleteTopics: remove topics and their data from every broker.

From v6 a topic may be named by its id instead of its name (KIP-516): an unknown id is
UNKNOWN_TOPIC_ID, and naming a topic both ways is an invalid request.
"""

from __future__ import annotations

from typing import Any

from kio.schema.delete_topics.v6.request import DeleteTopicsRequest, DeleteTopicState

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import Operation, ResourceType
from . import _topics
from ._topic_ids import ZERO, absent, id_of, name_of
from .ports import Caller, Response

API_KEY, IDS_SINCE = 20, 6


def upgrade(decoded: Any, latest: type) -> Any:
    """v1-5 list topic names; as the newest version, each is a topic state without an id."""
    if type(decoded).__version__ >= IDS_SINCE:
        return codec.upgrade(decoded, latest)
    old = codec.upgrade(decoded, codec.request_class(API_KEY, IDS_SINCE - 1))
    module = codec.request_module(API_KEY, codec.latest_version(API_KEY))
    return codec.make(latest, timeout=old.timeout, topics=tuple(
        codec.entity(module, "DeleteTopicState", name=name, topic_id=ZERO) for name in old.topic_names))


def error_response(caller: Caller, request: DeleteTopicsRequest, code: ErrorCode) -> Response:
    """Every topic refused with ``code``, none deleted (the fault API, or an unforwarded request)."""
    return caller.respond(responses=tuple(
        caller.make("DeletableTopicResult", name=t.name, topic_id=t.topic_id, error_code=code, error_message=code.name)
        for t in request.topics))


class DeleteTopics(_topics.TopicsHandler):
    async def handle(self, caller: Caller, request: DeleteTopicsRequest) -> Response:
        return caller.respond(responses=tuple(self._delete(caller, t) for t in request.topics))

    def _name(self, state: DeleteTopicState) -> str:
        if state.name is not None and not absent(state.topic_id):
            raise KafkaError(ErrorCode.invalid_request, "Name a topic by its name or by its id, not both.")
        if state.name is not None:
            return state.name
        name = name_of(self.topics, state.topic_id) if not absent(state.topic_id) else None
        if name is None:
            raise KafkaError(ErrorCode.unknown_topic_id, f"No topic has the id {state.topic_id}.")
        return name

    def _delete(self, caller: Caller, state: DeleteTopicState) -> Any:
        topics, topic_id = self.topics, state.topic_id
        name: str | None = state.name
        try:
            name = self._name(state)
            topic_id = id_of(topics, name)
            if not caller.allowed(Operation.DELETE, ResourceType.TOPIC, name):
                raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to delete topic {name!r}.")
            if not topics.topic_deletion_enabled():
                raise KafkaError(ErrorCode.topic_deletion_disabled, "delete.topic.enable is false on this broker.")
            if topics.is_internal_topic(name):
                raise KafkaError(ErrorCode.invalid_request, f"{name} is an internal topic and cannot be deleted.")
            topics.delete_topic(name)
            code, message = ErrorCode.none, None
        except KafkaError as e:
            code, message = e.code, e.message
        return caller.make("DeletableTopicResult", name=name, topic_id=topic_id, error_code=code,
                           error_message=message)
