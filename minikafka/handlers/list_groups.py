"""ListGroups: the groups this broker coordinates (clients ask every broker).

From v4 the request may filter by state (KIP-518: ``--list --state Stable``) and each
group carries its state.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ._groups import coordinator


def _visible(ctx, groups):
    """All groups for DESCRIBE on the cluster, else those the principal may DESCRIBE, as Kafka."""
    if ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return groups
    return [g for g in groups if ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, g.group_id)]


async def handle(ctx, request):
    try:
        groups = coordinator(ctx).list_groups(set(request.states_filter))
    except KafkaError as e:
        return ctx.respond(error_code=e.code, groups=())
    listed = tuple(ctx.make("ListedGroup", group_id=g.group_id, protocol_type=g.protocol_type or "",
                            group_state=str(g.state))
                   for g in sorted(_visible(ctx, groups), key=lambda g: g.group_id))
    return ctx.respond(error_code=ErrorCode.none, groups=listed)
