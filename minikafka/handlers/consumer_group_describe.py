"""ConsumerGroupDescribe (KIP-848): a consumer-protocol group's epochs, assignor and members.

For each member: its epoch, its current assignment and its target assignment, so an
admin client (``describe_consumer_groups``) shows a group mid-reconciliation as it is.
A group that is not a consumer-protocol group (a classic one, or none) answers
GROUP_ID_NOT_FOUND; admin clients then ask DescribeGroups, as they do with Kafka.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from kio.schema.consumer_group_describe.v1.request import ConsumerGroupDescribeRequest

from ..errors import ErrorCode, KafkaError
from ..groups.consumer.group import ConsumerGroup
from ..groups.consumer.member import ConsumerMember
from ..security.acl import Operation, ResourceType
from ._authorize import NOT_REQUESTED, requested_group_operations
from ._groups import coordinator
from .context import RequestContext, Response

CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1  # MemberType (v1): a classic member joined with JoinGroup (KIP-848 migration)


def _assignment(ctx: RequestContext, partitions: Iterable[tuple[str, int]]) -> Any:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    topics = ctx.broker.metadata.topics
    return ctx.make("Assignment", topic_partitions=tuple(
        ctx.make("TopicPartitions", topic_id=uuid.UUID(topics[t].topic_id), topic_name=t, partitions=tuple(ps))
        for t, ps in by_topic.items() if t in topics))


def _member(ctx: RequestContext, group: ConsumerGroup, m: ConsumerMember) -> Any:
    return ctx.make("Member", member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                    member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                    subscribed_topic_names=m.subscribed_topic_names, subscribed_topic_regex=m.subscribed_topic_regex,
                    assignment=_assignment(ctx, m.assigned),
                    target_assignment=_assignment(ctx, group.target.get(m.member_id, ())),
                    member_type=CONSUMER_MEMBER if m.classic is None else CLASSIC_MEMBER)


def _described(ctx: RequestContext, group_id: str, operations: int) -> Any:
    try:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.group_authorization_failed)
        group = coordinator(ctx).consumer_describe(group_id)
    except KafkaError as e:
        return ctx.make("DescribedGroup", error_code=e.code, error_message=e.message, group_id=group_id,
                        group_state="", group_epoch=-1, assignment_epoch=-1, assignor_name="", members=(),
                        authorized_operations=NOT_REQUESTED)
    return ctx.make("DescribedGroup", error_code=ErrorCode.none, error_message=None, group_id=group_id,
                    group_state=str(group.state), group_epoch=group.group_epoch,
                    assignment_epoch=group.assignment_epoch, assignor_name=group.assignor,
                    members=tuple(_member(ctx, group, m) for m in group.members.values()),
                    authorized_operations=operations)


async def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> Response:
    return ctx.respond(groups=tuple(_described(ctx, g, requested_group_operations(ctx, request, g))
                                    for g in request.group_ids))


def error_response(ctx: RequestContext, request: ConsumerGroupDescribeRequest, code: ErrorCode) -> Response:
    """The fault API's answer: every group fails with ``code``."""
    return ctx.respond(groups=tuple(
        ctx.make("DescribedGroup", error_code=code, error_message=None, group_id=g, group_state="", group_epoch=-1,
                 assignment_epoch=-1, assignor_name="", members=(), authorized_operations=NOT_REQUESTED)
        for g in request.group_ids))
