"""ListPartitionReassignments (KIP-455): the partitions whose replicas are moving.

Each ongoing reassignment shows the partition's whole replica set during the move, the
replicas being added (not yet caught up) and those to be removed when it completes. A
null topic list means every partition; partitions not moving are left out.
"""

from __future__ import annotations

from typing import Any

from kio.schema.list_partition_reassignments.v0.request import ListPartitionReassignmentsRequest

from ..errors import ErrorCode
from .ports import Caller, PartitionView, ReassignmentPort, Response


def _in_progress(p: PartitionView) -> bool:
    return bool(p.adding_replicas or p.removing_replicas)


class ListPartitionReassignments:
    """The ListPartitionReassignments API over the broker's ``ReassignmentPort`` (its topics' state)."""

    def __init__(self, controller: ReassignmentPort) -> None:
        self.controller = controller

    async def handle(self, caller: Caller, request: ListPartitionReassignmentsRequest) -> Response:
        topics = (self._ongoing(caller, name, indexes) for name, indexes in self._wanted(request))
        return caller.respond(error_code=ErrorCode.none, error_message=None, topics=tuple(t for t in topics if t))

    def _wanted(self, request: ListPartitionReassignmentsRequest) -> list[tuple[str, set[int] | None]]:
        if request.topics is None:
            return [(name, None) for name in sorted(self.controller.topics())]
        return [(t.name, set(t.partition_indexes)) for t in request.topics]

    def _ongoing(self, caller: Caller, name: str, indexes: set[int] | None) -> Any:
        topic = self.controller.topics().get(name)
        moving = [p for p in (topic.partitions if topic else [])
                  if _in_progress(p) and (indexes is None or p.index in indexes)]
        if not moving:
            return None
        return caller.make("OngoingTopicReassignment", name=name, partitions=tuple(
            caller.make("OngoingPartitionReassignment", partition_index=p.index, replicas=tuple(p.replicas),
                        adding_replicas=tuple(p.adding_replicas), removing_replicas=tuple(p.removing_replicas))
            for p in moving))
