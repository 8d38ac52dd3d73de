"""What the group handlers share: the broker's group coordinator, and durations in ms."""

from __future__ import annotations

import datetime

from ..groups.coordinator import GroupCoordinator
from .context import RequestContext


def coordinator(ctx: RequestContext) -> GroupCoordinator:
    return ctx.broker.groups


def millis(duration: datetime.timedelta) -> int:
    """kio gives *_ms durations as timedelta; the coordinator counts milliseconds."""
    return int(duration.total_seconds() * 1000)
