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

from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest

from ..errors import ErrorCode, KafkaError
from ._groups import ConsumerGroupHandler, millis
from .ports import Caller, Response

COORDINATOR_CHOOSES_ID_UNTIL = 0  # v0 lets the coordinator choose a member id; from v1 the client does (KIP-1082)


def error_response(caller: Caller, request: ConsumerGroupHeartbeatRequest, code: ErrorCode,
                   message: str | None = None) -> Response:
    return caller.respond(error_code=code, error_message=message, member_id=None, member_epoch=-1,
                          heartbeat_interval=datetime.timedelta(0), assignment=None)


class ConsumerGroupHeartbeat(ConsumerGroupHandler):
    async def handle(self, caller: Caller, request: ConsumerGroupHeartbeatRequest) -> Response:
        member_id = request.member_id
        if not member_id and caller.api_version <= COORDINATOR_CHOOSES_ID_UNTIL and request.member_epoch == 0:
            member_id = str(uuid.uuid4())
        try:
            result = self.groups.consumer_group_heartbeat(
                request.group_id, member_id, request.member_epoch, request.instance_id, request.rack_id,
                millis(request.rebalance_timeout), request.subscribed_topic_names, request.subscribed_topic_regex,
                request.server_assignor, self._owned(request), caller.client_id, f"/{caller.client_host}")
        except KafkaError as e:
            return error_response(caller, request, e.code, e.message)
        return caller.respond(error_code=ErrorCode.none, error_message=None, member_id=result.member_id,
                              member_epoch=result.member_epoch,
                              heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
                              assignment=None if result.assignment is None
                              else self._assignment(caller, result.assignment))

    def _owned(self, request: ConsumerGroupHeartbeatRequest) -> frozenset[tuple[str, int]] | None:
        """The partitions the member says it owns, by name: a deleted topic's are no longer anybody's."""
        if request.topic_partitions is None:
            return None
        out: set[tuple[str, int]] = set()
        for t in request.topic_partitions:
            name = self.groups.topic_name_of(str(t.topic_id)) if t.topic_id else None
            if name is not None:
                out |= {(name, p) for p in t.partitions}
        return frozenset(out)
