"""DescribeGroups: a group's state, strategy and members, as ``--describe`` shows them.

As in Kafka, members' subscription metadata and assignments are only given while the
group is Stable (during a rebalance they are about to change); the member list is
always given. An unknown group is described as Dead with no error, and from v6 with
GROUP_ID_NOT_FOUND (KIP-1043). From v3 a client may ask for its authorized operations
(KIP-430), which the ACLs decide (all, without an authorizer).
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_groups.v6.request import DescribeGroupsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import GroupHandler
from .ports import NOT_REQUESTED, Caller, ClassicGroupView, ClassicMemberView, Response

STABLE = "Stable"
NOT_FOUND_SINCE = 6


def _member(caller: Caller, group: ClassicGroupView, m: ClassicMemberView) -> Any:
    stable = str(group.state) == STABLE
    return caller.make("DescribedGroupMember", member_id=m.member_id, group_instance_id=m.group_instance_id,
                       client_id=m.client_id, client_host=m.client_host,
                       member_metadata=m.metadata(group.protocol_name) if stable else b"",
                       member_assignment=m.assignment if stable else b"")


class DescribeGroups(GroupHandler):
    async def handle(self, caller: Caller, request: DescribeGroupsRequest) -> Response:
        wants = request.include_authorized_operations
        return caller.respond(groups=tuple(self._described(caller, g, wants) for g in request.groups))

    def _described(self, caller: Caller, group_id: str, wants_operations: bool) -> Any:
        operations = caller.requested_operations(wants_operations, ResourceType.GROUP, group_id)
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            group = self.groups.describe_group(group_id)
        except KafkaError as e:
            return caller.make("DescribedGroup", error_code=e.code, group_id=group_id, group_state="",
                               protocol_type="", protocol_data="", members=(), authorized_operations=NOT_REQUESTED)
        if group is None and caller.api_version >= NOT_FOUND_SINCE:
            return caller.make("DescribedGroup", error_code=ErrorCode.group_id_not_found,
                               error_message=f"Group {group_id} not found.", group_id=group_id, group_state="",
                               protocol_type="", protocol_data="", members=(), authorized_operations=NOT_REQUESTED)
        if group is None:
            return caller.make("DescribedGroup", error_code=ErrorCode.none, group_id=group_id, group_state="Dead",
                               protocol_type="", protocol_data="", members=(), authorized_operations=operations)
        stable = str(group.state) == STABLE
        return caller.make("DescribedGroup", error_code=ErrorCode.none, group_id=group_id,
                           group_state=str(group.state), protocol_type=group.protocol_type or "",
                           protocol_data=(group.protocol_name or "") if stable else "",
                           members=tuple(_member(caller, group, m) for m in group.members.values()),
                           authorized_operations=operations)
