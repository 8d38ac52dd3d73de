"""ConsumerGroupDescribe (KIP-848): a consumer-protocol group's epochs, assignor and members.

For each member: its epoch, its current assignment and its target assignment, so an
admin client (``describe_consumer_groups``) shows a group mid-reconciliation as it is.
A group that is not a consumer-protocol group (a classic one, or none) answers
GROUP_ID_NOT_FOUND; admin clients then ask DescribeGroups, as they do with Kafka.
"""

from __future__ import annotations

from typing import Any

from kio.schema.consumer_group_describe.v1.request import ConsumerGroupDescribeRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import ConsumerGroupHandler
from .ports import NOT_REQUESTED, Caller, ConsumerGroupView, ConsumerMemberView, Response

CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1  # MemberType (v1): a classic member joined with JoinGroup (KIP-848 migration)


def error_response(caller: Caller, request: ConsumerGroupDescribeRequest, code: ErrorCode) -> Response:
    """The fault API's answer: every group fails with ``code``."""
    return caller.respond(groups=tuple(
        caller.make("DescribedGroup", error_code=code, error_message=None, group_id=g, group_state="",
                    group_epoch=-1, assignment_epoch=-1, assignor_name="", members=(),
                    authorized_operations=NOT_REQUESTED)
        for g in request.group_ids))


class ConsumerGroupDescribe(ConsumerGroupHandler):
    async def handle(self, caller: Caller, request: ConsumerGroupDescribeRequest) -> Response:
        return caller.respond(groups=tuple(
            self._described(caller, g, caller.requested_operations(request.include_authorized_operations,
                                                                   ResourceType.GROUP, g))
            for g in request.group_ids))

    def _described(self, caller: Caller, group_id: str, operations: int) -> Any:
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            group = self.groups.describe_consumer_group(group_id)
        except KafkaError as e:
            return caller.make("DescribedGroup", error_code=e.code, error_message=e.message, group_id=group_id,
                               group_state="", group_epoch=-1, assignment_epoch=-1, assignor_name="", members=(),
                               authorized_operations=NOT_REQUESTED)
        return caller.make("DescribedGroup", error_code=ErrorCode.none, error_message=None, group_id=group_id,
                           group_state=str(group.state), group_epoch=group.group_epoch,
                           assignment_epoch=group.assignment_epoch, assignor_name=group.assignor,
                           members=tuple(self._member(caller, group, m) for m in group.members.values()),
                           authorized_operations=operations)

    def _member(self, caller: Caller, group: ConsumerGroupView, m: ConsumerMemberView) -> Any:
        return caller.make("Member", member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                           member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                           subscribed_topic_names=m.subscribed_topic_names,
                           subscribed_topic_regex=m.subscribed_topic_regex,
                           assignment=self._assignment(caller, m.assigned, with_names=True),
                           target_assignment=self._assignment(caller, group.target.get(m.member_id, ()),
                                                             with_names=True),
                           member_type=CONSUMER_MEMBER if m.classic is None else CLASSIC_MEMBER)
