"""OffsetDelete: remove a group's committed offsets for some partitions (KIP-496).

Allowed for an empty group, and for a live consumer group only on topics none of its
members subscribes to (GROUP_SUBSCRIBED_TO_TOPIC otherwise). Group-level errors
(GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR) go in the top-level code.
"""

from __future__ import annotations

from kio.schema.offset_delete.v0.request import OffsetDeleteRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import GroupHandler
from .ports import Caller, Response


class OffsetDelete(GroupHandler):
    async def handle(self, caller: Caller, request: OffsetDeleteRequest) -> Response:
        wanted: list[tuple[str, int]] = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
        denied = {(t, p): ErrorCode.topic_authorization_failed for t, p in wanted
                  if not caller.allowed(Operation.READ, ResourceType.TOPIC, t)}
        try:
            results = self.groups.delete_offsets(request.group_id, [w for w in wanted if w not in denied])
        except KafkaError as e:
            return caller.respond(error_code=e.code, topics=())
        results = {**results, **denied}
        topics = tuple(
            caller.make("OffsetDeleteResponseTopic", name=t.name, partitions=tuple(
                caller.make("OffsetDeleteResponsePartition", partition_index=p.partition_index,
                            error_code=results[(t.name, p.partition_index)])
                for p in t.partitions))
            for t in request.topics)
        return caller.respond(error_code=ErrorCode.none, topics=topics)
