"""ListGroups: the groups this broker coordinates (clients ask every broker).

From v4 the request may filter by state (KIP-518: ``--list --state Stable``) and each
group carries its state. v5 adds the group type, ``classic`` or ``consumer`` (KIP-848),
and a filter by type.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ._groups import coordinator


async def handle(ctx, request):
    try:
        groups = coordinator(ctx).list_groups(set(request.states_filter), set(request.types_filter))
    except KafkaError as e:
        return ctx.respond(error_code=e.code, groups=())
    listed = tuple(ctx.make("ListedGroup", group_id=g.group_id, protocol_type=g.protocol_type or "",
                            group_state=str(g.state), group_type=g.group_type)
                   for g in sorted(groups, key=lambda g: g.group_id))
    return ctx.respond(error_code=ErrorCode.none, groups=listed)
