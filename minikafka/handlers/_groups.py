"""What the group handlers share: the broker's group coordinator, or the error that
tells a client to look again (COORDINATOR_NOT_AVAILABLE while it is not attached)."""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError


def coordinator(ctx):
    if ctx.broker.groups is None:
        raise KafkaError(ErrorCode.coordinator_not_available, "The group coordinator is not running yet.")
    return ctx.broker.groups


def millis(duration) -> int:
    """kio gives *_ms durations as timedelta; the coordinator counts milliseconds."""
    return int(duration.total_seconds() * 1000)
