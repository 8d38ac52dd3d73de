"""CreateTopics: partitions, replication factor, replica assignment and settings.

``validate_only`` runs every check (name, collisions, counts, settings) and creates
nothing, as ``kafka-topics.sh --create --dry-run`` relies on. From v5 the answer also
carries the new topic's effective settings, and from v7 its topic id.
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.create_topics.v7.request import CreatableTopic, CreateTopicsRequest

from ..config import SOURCE_CODES, describe_topic
from ..errors import ErrorCode, KafkaError
from ..metadata import TopicInfo
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .context import RequestContext, Response


def _configs(ctx: RequestContext, name: str) -> tuple[Any, ...]:
    return tuple(ctx.make("CreatableTopicConfigs", name=e.name, value=e.value, read_only=False,
                          config_source=SOURCE_CODES[e.source], is_sensitive=False)
                 for e in describe_topic(ctx.broker.metadata.topic_config(name)))


def _create(ctx: RequestContext, t: CreatableTopic, validate_only: bool) -> TopicInfo:
    if not (ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
            or ctx.allowed(Operation.CREATE, ResourceType.TOPIC, t.name)):
        raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to create topic {t.name!r}.")
    assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments} or None
    if assignment and (t.num_partitions != -1 or t.replication_factor != -1):
        raise KafkaError(ErrorCode.invalid_request,
                         "Give either a replica assignment or partitions and replication factor, not both.")
    configs = {c.name: c.value for c in t.configs}
    return ctx.broker.create_topic(t.name, t.num_partitions, t.replication_factor, configs, assignment, validate_only)


def _result(ctx: RequestContext, t: CreatableTopic, validate_only: bool) -> Any:
    try:
        topic = _create(ctx, t, validate_only)
    except KafkaError as e:
        return ctx.make("CreatableTopicResult", name=t.name, error_code=e.code, error_message=e.message,
                        topic_id=uuid.UUID(int=0), topic_config_error_code=0, num_partitions=-1, replication_factor=-1,
                        configs=None)
    described = ctx.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name)
    configs = None if validate_only or not described or not ctx.has("CreatableTopicConfigs") else _configs(ctx, t.name)
    return ctx.make("CreatableTopicResult", name=t.name, error_code=ErrorCode.none, error_message=None,
                    topic_id=uuid.UUID(topic.topic_id), num_partitions=len(topic.partitions),
                    topic_config_error_code=ErrorCode.none if described else ErrorCode.topic_authorization_failed,
                    replication_factor=len(topic.partitions[0].replicas), configs=configs)


async def handle(ctx: RequestContext, request: CreateTopicsRequest) -> Response:
    validate_only = request.validate_only
    return ctx.respond(topics=tuple(_result(ctx, t, validate_only) for t in request.topics))
