"""What the group handlers share: the bases of their handler objects, which hold the broker's
``GroupsPort`` (the classic group and committed-offset APIs) or ``ConsumerGroupsPort`` (KIP-848),
durations in ms, and the KIP-430 bits of a group."""

from __future__ import annotations

import datetime

from ..security.acl import OPERATIONS, ResourceType
from .ports import Caller, ConsumerGroupsPort, GroupsPort


class GroupHandler:
    """A classic group or committed-offset API's handler, constructed by the registry with the groups port."""

    def __init__(self, groups: GroupsPort) -> None:
        self.groups = groups


class ConsumerGroupHandler:
    """A consumer group protocol API's handler (KIP-848), constructed with the consumer groups port."""

    def __init__(self, groups: ConsumerGroupsPort) -> None:
        self.groups = groups


def millis(duration: datetime.timedelta) -> int:
    """kio gives *_ms durations as timedelta; the coordinator counts milliseconds."""
    return int(duration.total_seconds() * 1000)


NOT_REQUESTED = -(2**31)  # KIP-430: the client did not ask for authorized operations


def authorized_operations(caller: Caller, group_id: str, wanted: bool) -> int:
    """KIP-430's bit field of what the principal may do to a group, if the client asked (as
    ``_authorize.authorized_operations``, which takes the old-style context)."""
    if not wanted:
        return NOT_REQUESTED
    bits = 0
    for op in OPERATIONS[ResourceType.GROUP]:
        if caller.allowed(op, ResourceType.GROUP, group_id):
            bits |= 1 << int(op)
    return bits
