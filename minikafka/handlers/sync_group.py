"""SyncGroup: the leader hands out the assignment; every member receives its part.

A follower's SyncGroup waits until the leader's arrives (its assignment is the
bytes the leader computed for it, opaque to the broker: the consumer protocol's
partitions and user data). From v5 both sides name the protocol type and strategy,
and a mismatch is INCONSISTENT_GROUP_PROTOCOL.
"""

from __future__ import annotations

from kio.schema.sync_group.v5.request import SyncGroupRequest

from ..errors import ErrorCode, KafkaError
from ._groups import GroupHandler
from .ports import Caller, Response


class SyncGroup(GroupHandler):
    async def handle(self, caller: Caller, request: SyncGroupRequest) -> Response:
        assignments = {a.member_id: a.assignment for a in request.assignments}
        try:
            result = await self.groups.sync_group(
                request.group_id, request.member_id, request.group_instance_id, request.generation_id, assignments,
                request.protocol_type, request.protocol_name)
        except KafkaError as e:
            return caller.respond(error_code=e.code, protocol_type=None, protocol_name=None, assignment=b"")
        return caller.respond(error_code=ErrorCode.none, protocol_type=result.protocol_type,
                              protocol_name=result.protocol_name, assignment=result.assignment)
