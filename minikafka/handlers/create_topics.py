"""CreateTopics: partitions, replication factor, replica assignment and settings.

``validate_only`` runs every check (name, collisions, counts, settings) and creates
nothing, as ``kafka-topics.sh --create --dry-run`` relies on. From v5 the answer also
carries the new topic's effective settings, and from v7 its topic id.
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.create_topics.v7.request import CreatableTopic, CreateTopicsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from . import _topics
from .ports import Caller, Response, TopicView


def error_response(caller: Caller, request: CreateTopicsRequest, code: ErrorCode) -> Response:
    """Every topic refused with ``code``, none created (the fault API, or an unforwarded request)."""
    return caller.respond(topics=tuple(
        caller.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=code, error_message=code.name,
                    topic_config_error_code=ErrorCode.none, num_partitions=-1, replication_factor=-1, configs=None)
        for t in request.topics))


class CreateTopics(_topics.TopicsHandler):
    async def handle(self, caller: Caller, request: CreateTopicsRequest) -> Response:
        validate_only = request.validate_only
        return caller.respond(topics=tuple(self._result(caller, t, validate_only) for t in request.topics))

    def _configs(self, caller: Caller, name: str) -> tuple[Any, ...]:
        return tuple(caller.make("CreatableTopicConfigs", name=n, value=v, read_only=False, config_source=source,
                                 is_sensitive=False) for n, v, source in self.topics.topic_settings(name))

    def _create(self, caller: Caller, t: CreatableTopic, validate_only: bool) -> TopicView:
        if not (caller.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
                or caller.allowed(Operation.CREATE, ResourceType.TOPIC, t.name)):
            raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to create topic {t.name!r}.")
        assignment = {int(a.partition_index): [int(b) for b in a.broker_ids] for a in t.assignments} or None
        if assignment and (t.num_partitions != -1 or t.replication_factor != -1):
            raise KafkaError(ErrorCode.invalid_request,
                             "Give either a replica assignment or partitions and replication factor, not both.")
        configs = {c.name: c.value for c in t.configs}
        return self.topics.create_topic(t.name, t.num_partitions, t.replication_factor, configs, assignment,
                                        validate_only)

    def _result(self, caller: Caller, t: CreatableTopic, validate_only: bool) -> Any:
        try:
            topic = self._create(caller, t, validate_only)
        except KafkaError as e:
            return caller.make("CreatableTopicResult", name=t.name, error_code=e.code, error_message=e.message,
                               topic_id=uuid.UUID(int=0), topic_config_error_code=0, num_partitions=-1,
                               replication_factor=-1, configs=None)
        described = caller.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name)
        configs = (None if validate_only or not described or not caller.has("CreatableTopicConfigs")
                   else self._configs(caller, t.name))
        return caller.make("CreatableTopicResult", name=t.name, error_code=ErrorCode.none, error_message=None,
                           topic_id=uuid.UUID(topic.topic_id), num_partitions=len(topic.partitions),
                           topic_config_error_code=(ErrorCode.none if described
                                                    else ErrorCode.topic_authorization_failed),
                           replication_factor=len(topic.partitions[0].replicas), configs=configs)
