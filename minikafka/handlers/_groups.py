"""What the group handlers share: the broker's group coordinator, and durations in ms."""

from __future__ import annotations

from ..groups.coordinator import GroupCoordinator


def coordinator(ctx) -> GroupCoordinator:
    return ctx.broker.groups


def millis(duration) -> int:
    """kio gives *_ms durations as timedelta; the coordinator counts milliseconds."""
    return int(duration.total_seconds() * 1000)
