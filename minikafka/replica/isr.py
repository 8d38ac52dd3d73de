"""Which followers leave the ISR and which come back (``replica.lag.time.max.ms``).

The leader decides from what it knows of each follower (``FollowerState``): a follower
that has not caught up with the leader's log end for longer than the lag limit drops out;
one that fetched recently and has everything up to the leader's log end rejoins. The
controller records the change (``Controller.shrink_isr``/``expand_isr``). This is plain
logic over numbers, so tests drive it without a broker or an event loop.
"""

from __future__ import annotations

from .partition import Partition


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
