"""DescribeShareGroupOffsets (KIP-932): where each share-partition of a group starts, and its lag.

What ``kafka-share-groups.sh --describe`` shows: the share-partition start offset (SPSO)
read from ``__share_group_state``, for the partitions asked or, when the request names
no topics, for every partition the group has read; v1 adds the lag, the records up to
the high watermark not yet acknowledged or archived. A partition the group never read
has start offset -1; an id that is not a share group is GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_share_group_offsets.v1.request import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
)

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from . import _share
from .ports import Caller, Response


class DescribeShareGroupOffsets(_share.ShareHandler):
    async def handle(self, caller: Caller, request: DescribeShareGroupOffsetsRequest) -> Response:
        return caller.respond(groups=tuple(self._group(caller, g) for g in request.groups))

    def _group(self, caller: Caller, g: DescribeShareGroupOffsetsRequestGroup) -> Any:
        wanted: dict[str, list[int]] | None = (
            None if g.topics is None else {t.topic_name: list(t.partitions) for t in g.topics})
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, g.group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            rows = self.share.share_group_start_offsets(g.group_id, wanted)
        except KafkaError as e:
            return caller.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=(),
                               error_code=e.code, error_message=e.message)
        topics = tuple(caller.make("DescribeShareGroupOffsetsResponseTopic", topic_name=t, topic_id=self.topic_id(t),
                                   partitions=tuple(_partition(caller, i, start, lag) for i, (start, lag) in parts))
                       for t, parts in _share.by_topic({(t, i): (start, lag) for t, i, start, lag in rows}).items())
        return caller.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=topics,
                           error_code=ErrorCode.none)


def _partition(caller: Caller, index: int, start: int, lag: int) -> Any:
    return caller.make("DescribeShareGroupOffsetsResponsePartition", partition_index=index, start_offset=start,
                       leader_epoch=-1, lag=lag, error_code=ErrorCode.none)
