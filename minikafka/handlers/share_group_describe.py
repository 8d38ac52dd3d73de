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
from . import _share
from .ports import NOT_REQUESTED, Caller, Response, ShareMemberView


class ShareGroupDescribe(_share.ShareHandler):
    async def handle(self, caller: Caller, request: ShareGroupDescribeRequest) -> Response:
        asked = request.include_authorized_operations
        return caller.respond(groups=tuple(
            self._described(caller, g, caller.requested_operations(asked, ResourceType.GROUP, g))
            for g in request.group_ids))

    def _described(self, caller: Caller, group_id: str, operations: int) -> Any:
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            group = self.share.describe_share_group(group_id)
        except KafkaError as e:
            return caller.make("DescribedGroup", error_code=e.code, error_message=e.message, group_id=group_id,
                               group_state="Dead", group_epoch=-1, assignment_epoch=-1, assignor_name="",
                               members=(), authorized_operations=NOT_REQUESTED)
        return caller.make("DescribedGroup", error_code=ErrorCode.none, group_id=group_id, group_state=group.state,
                           group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                           assignor_name="simple",
                           members=tuple(self._member(caller, m) for m in group.members.values()),
                           authorized_operations=operations)

    def _member(self, caller: Caller, m: ShareMemberView) -> Any:
        ids = {t: self.share.topic_id_of(t) for t in m.assignment}
        parts = tuple(caller.make("TopicPartitions", topic_id=uuid.UUID(topic_id), topic_name=t, partitions=ps)
                      for t, ps in sorted(m.assignment.items()) if (topic_id := ids[t]) is not None)
        return caller.make("Member", member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                           client_id=m.client_id, client_host=m.client_host, subscribed_topic_names=m.subscribed,
                           assignment=caller.make("Assignment", topic_partitions=parts))
