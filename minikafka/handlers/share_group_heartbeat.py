"""ShareGroupHeartbeat (KIP-932): join, stay in, or leave a share group, and learn the assignment.

The member sends its own id, its epoch (0 to join, -1 to leave) and, when they change,
its subscribed topics; the coordinator answers with the member's epoch, how often to
heartbeat, and, when it is news, the assignment: topic ids and partitions (see
``minikafka.share.group``). Errors are top-level: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
GROUP_ID_NOT_FOUND (the id names a group of another type), NOT_COORDINATOR, INVALID_REQUEST.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kio.schema.share_group_heartbeat.v1.request import ShareGroupHeartbeatRequest

from ..errors import ErrorCode, KafkaError
from ..share.group import Heartbeat, ShareMember
from .context import RequestContext, Response


def _assignment(ctx: RequestContext, member: ShareMember) -> Any:
    topics = ctx.broker.metadata.topics
    parts = tuple(ctx.make("TopicPartitions", topic_id=uuid.UUID(topics[t].topic_id), partitions=ps)
                  for t, ps in sorted(member.assignment.items()) if t in topics)
    return ctx.make("Assignment", topic_partitions=parts)


async def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequest) -> Response:
    hb = Heartbeat(request.member_id, request.member_epoch,
                   tuple(request.subscribed_topic_names) if request.subscribed_topic_names is not None else None,
                   request.rack_id, ctx.client_id, ctx.client_host)
    try:
        member, news, interval_ms = ctx.broker.share_groups.heartbeat(request.group_id, hb)
    except KafkaError as e:
        return ctx.respond(error_code=e.code, error_message=e.message, member_id=None, member_epoch=-1,
                           heartbeat_interval=datetime.timedelta(0))
    return ctx.respond(error_code=ErrorCode.none, member_id=member.member_id, member_epoch=member.member_epoch,
                       heartbeat_interval=datetime.timedelta(milliseconds=interval_ms),
                       assignment=_assignment(ctx, member) if news else None)
