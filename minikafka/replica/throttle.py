"""Replication throttles (KIP-73): a byte-rate limit on replicas that are catching up.

A replica added by a reassignment copies the whole partition from its leader, which can
take the bandwidth clients need. Kafka limits that copy per broker:
``leader.replication.throttled.rate`` bytes per second sent by a leader and
``follower.replication.throttled.rate`` fetched by a follower, for the replicas a topic
lists in ``leader.replication.throttled.replicas`` / ``follower.replication.throttled.replicas``
(``partition:broker`` pairs, or ``*``). Replicas in the ISR are never throttled.
``kafka-reassign-partitions.sh --throttle`` sets all four and ``--verify`` removes them.
"""

from __future__ import annotations

from collections.abc import Callable

WINDOW_MS = 1000


class ByteRate:
    """Bytes counted in one-second windows against a rate read from the broker's settings."""

    def __init__(self, rate: Callable[[], int]):
        self.rate = rate
        self._window_start, self._bytes = 0, 0

    def _roll(self, now_ms: int) -> None:
        if now_ms - self._window_start >= WINDOW_MS:
            self._window_start, self._bytes = now_ms, 0

    def allowance(self, now_ms: int) -> int:
        """Bytes still allowed in the current window (0: wait for the next one)."""
        self._roll(now_ms)
        return max(0, self.rate() - self._bytes)

    def record(self, size: int, now_ms: int) -> None:
        self._roll(now_ms)
        self._bytes += size


def listed(setting: str, partition: int, broker_id: int) -> bool:
    """Whether a topic's ``*.replication.throttled.replicas`` names this replica."""
    items = {x.strip() for x in str(setting).split(",")}
    return "*" in items or f"{partition}:{broker_id}" in items
