"""Which followers leave the ISR and which come back (``replica.lag.time.max.ms``).

The leader decides from what it knows of each follower (``FollowerState``): a follower
that has not caught up with the leader's log end for longer than the lag limit drops out;
one that fetched recently and has everything up to the leader's log end rejoins. This is
plain logic over numbers, so tests drive it without a broker or an event loop.

The leader does not write the change itself: it asks the controller, which owns the
partition's metadata, through an ``IsrChannel`` (Kafka's AlterPartition request, KIP-497).
The embedded cluster's channel calls the in-process controller
(``broker.ControllerIsrChannel``); a broker in its own process sends AlterPartition to
the KRaft controller quorum instead.
"""

from __future__ import annotations

from typing import Protocol

from ..metadata import PartitionInfo
from .partition import Partition


class IsrChannel(Protocol):
    """How a partition leader asks the controller to change a partition's ISR (AlterPartition)."""

    async def alter_partition(self, topic: str, index: int, leader_epoch: int, new_isr: list[int]) -> PartitionInfo:
        """Ask for ``new_isr``; return the partition as the controller now has it.

        Raises ``KafkaError`` with AlterPartition's error: FENCED_LEADER_EPOCH when
        ``leader_epoch`` is not the partition's current one (this broker no longer leads it),
        UNKNOWN_TOPIC_OR_PARTITION, or INELIGIBLE_REPLICA for a broker that may not join.
        """
        ...


def proposed_isr(part: Partition, drop: list[int], add: list[int]) -> list[int]:
    """The ISR a leader asks for: the current one without ``drop``, with ``add``, in replica order."""
    keep = (set(part.info.isr) - set(drop)) | set(add)
    return [b for b in part.info.replicas if b in keep]


def isr_changes(part: Partition, lag_max_ms: int, now: int) -> tuple[list[int], list[int]]:
    """Leader: (followers to drop from the ISR, followers to add back)."""
    drop, add = [], []
    for broker_id in part.info.replicas:
        if broker_id == part.node_id:
            continue
        state = part.followers.get(broker_id)
        if broker_id in part.info.isr:
            if state is not None and state.log_end_offset < part.log_end_offset \
                    and now - state.last_caught_up_ms > lag_max_ms:
                drop.append(broker_id)
        elif state is not None and now - state.last_fetch_ms <= lag_max_ms \
                and state.log_end_offset >= part.high_watermark and state.log_end_offset >= part.log_end_offset:
            add.append(broker_id)
    return drop, add
