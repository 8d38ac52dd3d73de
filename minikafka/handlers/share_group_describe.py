"""ShareGroupDescribe (KIP-932): a share group's state, epochs and members with their assignments.

What ``kafka-share-groups.sh --describe --members`` shows. An id with no share group
behind it gets GROUP_ID_NOT_FOUND, with Kafka's sentence ("Group g is not a share group."
for a consumer group's id, "Group g not found." otherwise); every operation is
authorized, as there are no ACLs.
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.share_group_describe.v1.request import ShareGroupDescribeRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ..share.group import ShareMember
from ._authorize import NOT_REQUESTED, requested_group_operations
from .context import RequestContext, Response


def _member(ctx: RequestContext, m: ShareMember) -> Any:
    topics = ctx.broker.metadata.topics
    parts = tuple(ctx.make("TopicPartitions", topic_id=uuid.UUID(topics[t].topic_id), topic_name=t, partitions=ps)
                  for t, ps in sorted(m.assignment.items()) if t in topics)
    return ctx.make("Member", member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                    client_id=m.client_id, client_host=m.client_host, subscribed_topic_names=m.subscribed,
                    assignment=ctx.make("Assignment", topic_partitions=parts))


def _described(ctx: RequestContext, group_id: str, operations: int) -> Any:
    try:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.group_authorization_failed)
        group = ctx.broker.share_groups.describe(group_id)
    except KafkaError as e:
        return ctx.make("DescribedGroup", error_code=e.code, error_message=e.message, group_id=group_id,
                        group_state="Dead", group_epoch=-1, assignment_epoch=-1, assignor_name="", members=(),
                        authorized_operations=NOT_REQUESTED)
    return ctx.make("DescribedGroup", error_code=ErrorCode.none, group_id=group_id, group_state=group.state,
                    group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, assignor_name="simple",
                    members=tuple(_member(ctx, m) for m in group.members.values()),
                    authorized_operations=operations)


async def handle(ctx: RequestContext, request: ShareGroupDescribeRequest) -> Response:
    return ctx.respond(groups=tuple(_described(ctx, g, requested_group_operations(ctx, request, g))
                                    for g in request.group_ids))
