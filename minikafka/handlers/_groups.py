"""What the group handlers share: the bases of their handler objects, which hold the broker's
``GroupsPort`` (the classic group and committed-offset APIs) or ``ConsumerGroupsPort`` (KIP-848),
and durations in ms."""

from __future__ import annotations

import datetime

from .ports import ConsumerGroupsPort, GroupsPort


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

