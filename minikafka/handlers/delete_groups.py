"""DeleteGroups: forget empty groups and their committed offsets.

Only a group with no active members can be deleted (NON_EMPTY_GROUP otherwise); its
offsets and metadata get tombstones in ``__consumer_offsets``, so compaction removes
them for good. An unknown group answers GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from kio.schema.delete_groups.v2.request import DeleteGroupsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import GroupHandler
from .ports import Caller, Response


class DeleteGroups(GroupHandler):
    async def handle(self, caller: Caller, request: DeleteGroupsRequest) -> Response:
        results = tuple(caller.make("DeletableGroupResult", group_id=g, error_code=self._delete(caller, g))
                        for g in request.groups_names)
        return caller.respond(results=results)

    def _delete(self, caller: Caller, group_id: str) -> ErrorCode:
        try:
            if not caller.allowed(Operation.DELETE, ResourceType.GROUP, group_id):
                raise KafkaError(ErrorCode.group_authorization_failed)
            self.groups.delete_group(group_id)
        except KafkaError as e:
            return e.code
        return ErrorCode.none
