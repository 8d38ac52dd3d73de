"""What the group handlers share: the bases of their handler objects, which hold the broker's
``GroupsPort`` (the classic group and committed-offset APIs) or ``ConsumerGroupsPort`` (KIP-848),
durations in ms, and how KIP-848's answers carry an assignment."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterable
from typing import Any

from .ports import Caller, ConsumerGroupsPort, GroupsPort


class GroupHandler:
    """A classic group or committed-offset API's handler, constructed by the registry with the groups port."""

    def __init__(self, groups: GroupsPort) -> None:
        self.groups = groups


class ConsumerGroupHandler:
    """A consumer group protocol API's handler (KIP-848), constructed with the consumer groups port."""

    def __init__(self, groups: ConsumerGroupsPort) -> None:
        self.groups = groups

    def _assignment(self, caller: Caller, partitions: Iterable[tuple[str, int]], *, with_names: bool = False) -> Any:
        """An ``Assignment``: the partitions by topic id (and name, where the answer has one: Describe's);
        a topic deleted meanwhile, whose id is gone, is left out."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)
        ids = {t: self.groups.topic_id_of(t) for t in by_topic}
        return caller.make("Assignment", topic_partitions=tuple(
            caller.make("TopicPartitions", topic_id=uuid.UUID(topic_id), partitions=tuple(ps),
                        **({"topic_name": t} if with_names else {}))
            for t, ps in by_topic.items() if (topic_id := ids[t]) is not None))


def millis(duration: datetime.timedelta) -> int:
    """kio gives *_ms durations as timedelta; the coordinator counts milliseconds."""
    return int(duration.total_seconds() * 1000)

