"""Metadata: brokers, controller, and per-partition leader, replicas and ISR.

Clients start here. When a client asks for a topic that does not exist and
``auto.create.topics.enable`` is true (Kafka's default, and what librdkafka's own
tests expect), the topic is created with ``num.partitions`` partitions.
"""

from __future__ import annotations

import uuid
from collections.abc import Container
from typing import Any

from kio.schema.metadata.v13.request import MetadataRequest

from ..errors import ErrorCode, KafkaError
from ..metadata import PartitionInfo, TopicInfo, check_topic_name
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ._authorize import NOT_REQUESTED, authorized_operations
from .context import RequestContext, Response


def _partition(ctx: RequestContext, p: PartitionInfo, live: Container[int]) -> Any:
    offline = tuple(b for b in p.replicas if b not in live)
    leader = p.leader if p.leader in live else -1
    return ctx.make("MetadataResponsePartition",
                    error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                    partition_index=p.index, leader_id=leader, leader_epoch=p.leader_epoch,
                    replica_nodes=tuple(p.replicas), isr_nodes=tuple(b for b in p.isr if b in live),
                    offline_replicas=offline)


def _topic(ctx: RequestContext, topic: TopicInfo, with_operations: bool = False) -> Any:
    live = ctx.broker_endpoints
    operations = authorized_operations(ctx, ResourceType.TOPIC, topic.name) if with_operations else NOT_REQUESTED
    return ctx.make("MetadataResponseTopic", error_code=ErrorCode.none, name=topic.name,
                    topic_id=uuid.UUID(topic.topic_id), is_internal=topic.internal,
                    partitions=tuple(_partition(ctx, p, live) for p in topic.partitions),
                    topic_authorized_operations=operations)


def _missing(ctx: RequestContext, name: str, code: ErrorCode) -> Any:
    return ctx.make("MetadataResponseTopic", error_code=code, name=name, topic_id=uuid.UUID(int=0),
                    is_internal=False, partitions=())


def _lookup(ctx: RequestContext, name: str, auto_create: bool, with_operations: bool = False) -> Any:
    broker = ctx.broker
    try:
        check_topic_name(name)
    except KafkaError as e:
        return _missing(ctx, name, e.code)
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return _missing(ctx, name, ErrorCode.topic_authorization_failed)
    topic = broker.metadata.topics.get(name)
    if topic is None and auto_create and not _may_create(ctx, name):
        return _missing(ctx, name, ErrorCode.topic_authorization_failed)
    if topic is None and auto_create:
        try:
            topic = broker.auto_create(name)
        except KafkaError as e:
            return _missing(ctx, name, e.code)
    if topic is None:
        return _missing(ctx, name, ErrorCode.unknown_topic_or_partition)
    return _topic(ctx, topic, with_operations)


def _may_create(ctx: RequestContext, name: str) -> bool:
    """Auto-creation needs CREATE on the cluster or on the topic, as a CreateTopics request would."""
    return (ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
            or ctx.allowed(Operation.CREATE, ResourceType.TOPIC, name))


def _requested_names(ctx: RequestContext, request: MetadataRequest) -> list[str] | None:
    if request.topics is None:
        return None
    names: list[str] = []
    for t in request.topics:
        name: str | None = t.name
        if name is None and t.topic_id:
            found = ctx.broker.metadata.topic_by_id(str(t.topic_id))
            name = found.name if found else None
        if name is not None:
            names.append(name)
    return names


def _cluster_operations(ctx: RequestContext) -> int:
    """v8-10's cluster_authorized_operations (KIP-430), for a principal that may DESCRIBE the
    cluster. The newest request no longer has the flag that asks for them, so they are given
    whenever that version is used."""
    if ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return authorized_operations(ctx, ResourceType.CLUSTER)
    return NOT_REQUESTED


def _respond(ctx: RequestContext, topics: tuple[Any, ...]) -> Response:
    meta = ctx.broker.metadata
    brokers = tuple(ctx.make("MetadataResponseBroker", node_id=i, host=h, port=p, rack=meta.racks.get(i))
                    for i, (h, p) in sorted(ctx.broker_endpoints.items()))
    operations = _cluster_operations(ctx) if 8 <= ctx.api_version <= 10 else NOT_REQUESTED
    return ctx.respond(brokers=brokers, cluster_id=meta.cluster_id, controller_id=meta.controller_id,
                       topics=topics, cluster_authorized_operations=operations, error_code=ErrorCode.none)


def error_response(ctx: RequestContext, request: MetadataRequest, code: ErrorCode) -> Response:
    """The fault API's answer: the brokers as usual, every requested topic failing with ``code``."""
    names = _requested_names(ctx, request)
    return _respond(ctx, tuple(_missing(ctx, n, code) for n in (names or ctx.broker.metadata.topics)))


async def handle(ctx: RequestContext, request: MetadataRequest) -> Response:
    meta = ctx.broker.metadata
    names = _requested_names(ctx, request)
    ops = request.include_topic_authorized_operations
    if names is None or (ctx.api_version == 0 and not names):  # v0: empty list means all topics
        # topics the principal may not describe are left out, as Kafka does
        topics = tuple(_topic(ctx, t, ops) for t in meta.topics.values()
                       if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t.name))
    else:
        auto = request.allow_auto_topic_creation
        topics = tuple(_lookup(ctx, n, auto, ops) for n in names)
    return _respond(ctx, topics)
