"""Heartbeat: a member shows it is alive between polls.

A member that sends none for ``session.timeout.ms`` is removed and the group
rebalances. While a rebalance is under way the answer is REBALANCE_IN_PROGRESS: that
is how the other members learn they must rejoin. A stale generation gets
ILLEGAL_GENERATION, a replaced static member FENCED_INSTANCE_ID (KIP-345). A classic
member of a consumer group (KIP-848's online migration) is told REBALANCE_IN_PROGRESS when
it must rejoin to reach its new target assignment.
"""

from __future__ import annotations

from kio.schema.heartbeat.v4.request import HeartbeatRequest

from ..errors import ErrorCode, KafkaError
from ._groups import GroupHandler
from .ports import Caller, Response


class Heartbeat(GroupHandler):
    async def handle(self, caller: Caller, request: HeartbeatRequest) -> Response:
        try:
            self.groups.heartbeat_group(request.group_id, request.member_id, request.group_instance_id,
                                        request.generation_id)
        except KafkaError as e:
            return caller.respond(error_code=e.code)
        return caller.respond(error_code=ErrorCode.none)
