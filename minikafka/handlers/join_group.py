"""JoinGroup: a member asks to be part of the group's next generation.

The answer waits until the rebalance completes (every known member rejoined, or the
rebalance timeout passed). The leader's answer carries every member's subscription
metadata, for the client-side assignor; followers get an empty member list. From v4
a first join with an empty member id is answered MEMBER_ID_REQUIRED with a fresh id
to join again with (KIP-394). v0 has no rebalance timeout: the session timeout
serves as both, as in Kafka. The id of a share group is INCONSISTENT_GROUP_PROTOCOL.
A JoinGroup to a consumer group with members (KIP-848's online migration) joins it as a
classic member and is answered at once, with no leader: the broker's assignor decides
(``groups.consumer.classic``).
"""

from __future__ import annotations

from kio.schema.join_group.v9.request import JoinGroupRequest

from ..errors import ErrorCode, KafkaError, MemberIdRequired
from ._groups import GroupHandler, millis
from .ports import Caller, Response


def _error(caller: Caller, code: ErrorCode, member_id: str = "") -> Response:
    return caller.respond(error_code=code, generation_id=-1, protocol_type=None,
                          protocol_name="" if caller.api_version < 7 else None,
                          leader="", member_id=member_id, members=())


class JoinGroup(GroupHandler):
    async def handle(self, caller: Caller, request: JoinGroupRequest) -> Response:
        if self.groups.is_share_group(request.group_id):  # one group id, one type of group (KIP-932)
            return _error(caller, ErrorCode.inconsistent_group_protocol, request.member_id)
        session_ms = millis(request.session_timeout)
        rebalance_ms = millis(request.rebalance_timeout)
        try:
            result = await self.groups.join_group(
                request.group_id, request.member_id, request.group_instance_id, caller.client_id,
                f"/{caller.client_host}", session_ms, rebalance_ms if rebalance_ms > 0 else session_ms,
                request.protocol_type, tuple((p.name, p.metadata) for p in request.protocols),
                require_known_member_id=caller.api_version >= 4)
        except MemberIdRequired as e:
            return _error(caller, e.code, e.member_id)
        except KafkaError as e:
            return _error(caller, e.code, request.member_id)
        members = tuple(caller.make("JoinGroupResponseMember", member_id=m, group_instance_id=instance,
                                    metadata=metadata) for m, instance, metadata in result.members)
        return caller.respond(error_code=ErrorCode.none, generation_id=result.generation_id,
                              protocol_type=result.protocol_type, protocol_name=result.protocol_name or "",
                              leader=result.leader_id, member_id=result.member_id, members=members)
