"""ConsumerGroupHeartbeat (KIP-848): join, stay in, and leave a consumer-protocol group.

One request does what JoinGroup, SyncGroup, Heartbeat and LeaveGroup do in the classic
protocol: member epoch 0 joins (with the subscription and a rebalance timeout), -1
leaves, -2 leaves for now (a static member), anything else is a heartbeat that may
carry what changed and the partitions the member owns. The answer carries the member
epoch, the heartbeat interval, and the member's partitions when they changed. Partitions
travel by topic id; the coordinator works with names.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterable
from typing import Any

from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest

from ..errors import ErrorCode, KafkaError
from ..groups.consumer.group import Heartbeat
from ._groups import coordinator, millis
from .context import RequestContext, Response


def _owned(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> frozenset | None:
    if request.topic_partitions is None:
        return None
    out = set()
    for t in request.topic_partitions:
        topic = ctx.broker.metadata.topic_by_id(str(t.topic_id)) if t.topic_id else None
        if topic is not None:  # a deleted topic's partitions are no longer anybody's
            out |= {(topic.name, p) for p in t.partitions}
    return frozenset(out)


def _heartbeat(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> Heartbeat:
    member_id = request.member_id
    if not member_id and ctx.api_version == 0 and request.member_epoch == 0:
        member_id = str(uuid.uuid4())  # v0 lets the coordinator choose; from v1 the client does (KIP-1082)
    return Heartbeat(
        member_id=member_id, member_epoch=request.member_epoch, instance_id=request.instance_id,
        rack_id=request.rack_id, rebalance_timeout_ms=millis(request.rebalance_timeout),
        subscribed_topic_names=request.subscribed_topic_names, subscribed_topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor, owned=_owned(ctx, request), client_id=ctx.client_id,
        client_host=f"/{ctx.client_host}")


def _assignment(ctx: RequestContext, partitions: Iterable[tuple[str, int]]) -> Any:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    topics = ctx.broker.metadata.topics
    return ctx.make("Assignment", topic_partitions=tuple(
        ctx.make("TopicPartitions", topic_id=uuid.UUID(topics[t].topic_id), partitions=tuple(ps))
        for t, ps in by_topic.items() if t in topics))


def error_response(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest, code: ErrorCode,
                   message: str | None = None) -> Response:
    return ctx.respond(error_code=code, error_message=message, member_id=None, member_epoch=-1,
                       heartbeat_interval=datetime.timedelta(0), assignment=None)


async def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> Response:
    try:
        result = coordinator(ctx).consumer_heartbeat(request.group_id, _heartbeat(ctx, request))
    except KafkaError as e:
        return error_response(ctx, request, e.code, e.message)
    return ctx.respond(error_code=ErrorCode.none, error_message=None, member_id=result.member_id,
                       member_epoch=result.member_epoch,
                       heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
                       assignment=None if result.assignment is None else _assignment(ctx, result.assignment))
