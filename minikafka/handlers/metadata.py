"""Metadata: brokers, controller, and per-partition leader, replicas and ISR.

Clients start here. When a client asks for a topic that does not exist and
``auto.create.topics.enable`` is true (Kafka's default, and what librdkafka's own
tests expect), the topic is created with ``num.partitions`` partitions.
"""

from __future__ import annotations

import uuid

from ..errors import ErrorCode, KafkaError
from ..metadata import TopicInfo, check_topic_name


def _partition(ctx, p, live):
    offline = tuple(b for b in p.replicas if b not in live)
    leader = p.leader if p.leader in live else -1
    return ctx.make("MetadataResponsePartition",
                    error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                    partition_index=p.index, leader_id=leader, leader_epoch=p.leader_epoch,
                    replica_nodes=tuple(p.replicas), isr_nodes=tuple(b for b in p.isr if b in live),
                    offline_replicas=offline)


def _topic(ctx, topic: TopicInfo):
    live = ctx.broker.metadata.brokers
    return ctx.make("MetadataResponseTopic", error_code=ErrorCode.none, name=topic.name,
                    topic_id=uuid.UUID(topic.topic_id), is_internal=topic.internal,
                    partitions=tuple(_partition(ctx, p, live) for p in topic.partitions))


def _missing(ctx, name, code: ErrorCode):
    return ctx.make("MetadataResponseTopic", error_code=code, name=name, topic_id=uuid.UUID(int=0),
                    is_internal=False, partitions=())


def _lookup(ctx, name: str, auto_create: bool):
    broker = ctx.broker
    try:
        check_topic_name(name)
    except KafkaError as e:
        return _missing(ctx, name, e.code)
    topic = broker.metadata.topics.get(name)
    if topic is None and auto_create:
        try:
            topic = broker.auto_create(name)
        except KafkaError as e:
            return _missing(ctx, name, e.code)
    if topic is None:
        return _missing(ctx, name, ErrorCode.unknown_topic_or_partition)
    return _topic(ctx, topic)


def _requested_names(ctx, request) -> list[str] | None:
    if request.topics is None:
        return None
    names = []
    for t in request.topics:
        name = t.name
        if name is None and t.topic_id:
            found = ctx.broker.metadata.topic_by_id(str(t.topic_id))
            name = found.name if found else None
        if name is not None:
            names.append(name)
    return names


def _respond(ctx, topics):
    meta = ctx.broker.metadata
    brokers = tuple(ctx.make("MetadataResponseBroker", node_id=i, host=h, port=p, rack=None)
                    for i, (h, p) in sorted(meta.brokers.items()))
    return ctx.respond(brokers=brokers, cluster_id=meta.cluster_id, controller_id=meta.controller_id,
                       topics=topics, error_code=ErrorCode.none)


def error_response(ctx, request, code: ErrorCode):
    """The fault API's answer: the brokers as usual, every requested topic failing with ``code``."""
    names = _requested_names(ctx, request)
    return _respond(ctx, tuple(_missing(ctx, n, code) for n in (names or ctx.broker.metadata.topics)))


async def handle(ctx, request):
    meta = ctx.broker.metadata
    names = _requested_names(ctx, request)
    if names is None or (ctx.api_version == 0 and not names):  # v0: empty list means all topics
        topics = tuple(_topic(ctx, t) for t in meta.topics.values())
    else:
        auto = request.allow_auto_topic_creation
        topics = tuple(_lookup(ctx, n, auto) for n in names)
    return _respond(ctx, topics)
