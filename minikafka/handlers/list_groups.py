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
from ._groups import GroupHandler
from .ports import Caller, Listed, Response


def _visible(caller: Caller, groups: list[Listed]) -> list[Listed]:
    if caller.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return groups
    return [g for g in groups if caller.allowed(Operation.DESCRIBE, ResourceType.GROUP, g[0])]


class ListGroups(GroupHandler):
    async def handle(self, caller: Caller, request: ListGroupsRequest) -> Response:
        try:
            groups = _visible(caller, self._listed(request))
        except KafkaError as e:
            return caller.respond(error_code=e.code, groups=())
        listed = tuple(caller.make("ListedGroup", group_id=group_id, protocol_type=protocol_type, group_state=state,
                                   group_type=kind) for group_id, protocol_type, state, kind in groups)
        return caller.respond(error_code=ErrorCode.none, groups=listed)

    def _listed(self, request: ListGroupsRequest) -> list[Listed]:
        """(group id, protocol type, state, type) of every group that passes the filters."""
        states = {s.lower() for s in request.states_filter}
        types = {t.lower() for t in request.types_filter}
        out = list(self.groups.list_groups(set(request.states_filter), set(request.types_filter)))
        if not types or "share" in types:
            out += [(group_id, "share", state, "share") for group_id, state in self.groups.list_share_groups()
                    if not states or state.lower() in states]
        return sorted(out)
