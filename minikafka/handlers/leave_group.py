"""LeaveGroup: members leave now instead of waiting for their session to time out.

A consumer closing cleanly sends it so its partitions move at once. v0-2 name one
member; v3+ (KIP-345) a list of members, each by member id and/or
``group.instance.id`` (an admin may remove a static member by instance id alone), with
one error code per member.
"""

from __future__ import annotations

from typing import Any

from kio.schema.leave_group.v5.request import LeaveGroupRequest

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ._groups import GroupHandler
from .ports import Caller, Response

API_KEY = 13
LISTS_SINCE = 3


def upgrade(decoded: Any, latest: type) -> Any:
    """v0-2 name one member at the top; as the newest version, that is a list of one."""
    if hasattr(decoded, "members"):
        return codec.upgrade(decoded, latest)
    identity = codec.entity(codec.request_module(API_KEY, codec.latest_version(API_KEY)), "MemberIdentity",
                            member_id=decoded.member_id, group_instance_id=None, reason=None)
    return codec.make(latest, group_id=decoded.group_id, members=(identity,))


class LeaveGroup(GroupHandler):
    async def handle(self, caller: Caller, request: LeaveGroupRequest) -> Response:
        leaving = [(m.member_id, m.group_instance_id) for m in request.members]
        try:
            codes = self.groups.leave_group(request.group_id, leaving)
        except KafkaError as e:  # NOT_COORDINATOR and the like: the whole request failed
            return caller.respond(error_code=e.code, members=())
        if caller.api_version < LISTS_SINCE:
            return caller.respond(error_code=codes[0])
        members = tuple(caller.make("MemberResponse", member_id=m, group_instance_id=i, error_code=code)
                        for (m, i), code in zip(leaving, codes))
        return caller.respond(error_code=ErrorCode.none, members=members)
