"""DeleteGroups: forget empty groups and their committed offsets.

Only a group with no active members can be deleted (NON_EMPTY_GROUP otherwise); its
offsets and metadata get tombstones in ``__consumer_offsets``, so compaction removes
them for good. An unknown group answers GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from kio.schema.delete_groups.v2.request import DeleteGroupsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import coordinator
from .context import RequestContext, Response


def _delete(ctx: RequestContext, group_id: str) -> ErrorCode:
    try:
        if not ctx.allowed(Operation.DELETE, ResourceType.GROUP, group_id):
            raise KafkaError(ErrorCode.group_authorization_failed)
        coordinator(ctx).delete_group(group_id)
    except KafkaError as e:
        return e.code
    return ErrorCode.none


async def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> Response:
    results = tuple(ctx.make("DeletableGroupResult", group_id=g, error_code=_delete(ctx, g))
                    for g in request.groups_names)
    return ctx.respond(results=results)
