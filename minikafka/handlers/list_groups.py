"""ListGroups: the groups this broker coordinates (clients ask every broker).

From v4 the request may filter by state (KIP-518: ``--list --state Stable``) and each
group carries its state. v5 adds the group type and a filter by type: ``classic`` for
the groups of JoinGroup/SyncGroup, ``consumer`` for KIP-848's ConsumerGroupHeartbeat
groups, ``share`` for share groups (KIP-932, protocol type ``share`` too). A principal
sees every group with DESCRIBE on the cluster, else the groups it may DESCRIBE, as Kafka.
"""

from __future__ import annotations

from kio.schema.list_groups.v5.request import ListGroupsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from ._groups import coordinator
from .context import RequestContext, Response

Listed = tuple[str, str, str, str]  # group id, protocol type, state, type


def _listed(ctx: RequestContext, request: ListGroupsRequest) -> list[Listed]:
    """(group id, protocol type, state, type) of every group that passes the filters."""
    states = {s.lower() for s in request.states_filter}
    types = {t.lower() for t in request.types_filter}
    out = [(g.group_id, g.protocol_type or "", str(g.state), g.group_type)
           for g in coordinator(ctx).list_groups(set(request.states_filter), set(request.types_filter))]
    if not types or "share" in types:
        out += [(g.group_id, "share", g.state, "share") for g in ctx.broker.share_groups.list_groups()
                if not states or g.state.lower() in states]
    return sorted(out)


def _visible(ctx: RequestContext, groups: list[Listed]) -> list[Listed]:
    if ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return groups
    return [g for g in groups if ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, g[0])]


async def handle(ctx: RequestContext, request: ListGroupsRequest) -> Response:
    try:
        groups = _visible(ctx, _listed(ctx, request))
    except KafkaError as e:
        return ctx.respond(error_code=e.code, groups=())
    listed = tuple(ctx.make("ListedGroup", group_id=group_id, protocol_type=protocol_type, group_state=state,
                            group_type=kind) for group_id, protocol_type, state, kind in groups)
    return ctx.respond(error_code=ErrorCode.none, groups=listed)
