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
from . import _share
from .ports import Caller, Response, ShareMemberView


class ShareGroupHeartbeat(_share.ShareHandler):
    async def handle(self, caller: Caller, request: ShareGroupHeartbeatRequest) -> Response:
        subscribed = tuple(request.subscribed_topic_names) if request.subscribed_topic_names is not None else None
        try:
            member, news, interval_ms = self.share.share_group_heartbeat(
                request.group_id, request.member_id, request.member_epoch, subscribed, request.rack_id,
                caller.client_id, caller.client_host)
        except KafkaError as e:
            return caller.respond(error_code=e.code, error_message=e.message, member_id=None, member_epoch=-1,
                                  heartbeat_interval=datetime.timedelta(0))
        return caller.respond(error_code=ErrorCode.none, member_id=member.member_id,
                              member_epoch=member.member_epoch,
                              heartbeat_interval=datetime.timedelta(milliseconds=interval_ms),
                              assignment=self._assignment(caller, member) if news else None)

    def _assignment(self, caller: Caller, member: ShareMemberView) -> Any:
        ids = {t: self.share.topic_id_of(t) for t in member.assignment}
        parts = tuple(caller.make("TopicPartitions", topic_id=uuid.UUID(topic_id), partitions=ps)
                      for t, ps in sorted(member.assignment.items()) if (topic_id := ids[t]) is not None)
        return caller.make("Assignment", topic_partitions=parts)
