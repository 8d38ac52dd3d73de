"""The broker's one clock, in one unit: integer milliseconds (Kafka's ``Time``).

A ``Clock`` has two readings, as Kafka's ``Time`` has ``hiResClockMs`` and ``milliseconds``:

* ``monotonic_ms()`` never goes back, and means nothing on its own: durations and deadlines
  are measured on it (session and rebalance timeouts, heartbeats, acquisition locks, request
  waits). A wall clock set back by NTP must not expire a member, nor keep one alive.
* ``wall_ms()`` is milliseconds since the epoch: what is written down or shown (record and
  commit timestamps, a group's state timestamp, ages compared with record timestamps).

The sans-I/O parts (groups, share groups, their coordinators, the Fetch long poll) take a
``Clock`` and never read the time themselves. The broker and the Cluster give them
``SYSTEM``; a test gives them a ``ManualClock`` and moves it by hand, so a timeout is
exact to the millisecond and nothing sleeps. Settings keep Kafka's names and units
(``session.timeout.ms``, ``group.share.record.lock.duration.ms``): milliseconds throughout,
converted to seconds only where asyncio is asked to wait. Under a ``ManualClock`` a request
that waits (a Fetch's or a ShareFetch's ``max_wait``) waits until its data arrives or the test
moves the clock past its deadline: time passes for nobody unless told.

The log (segment roll and retention, ``LogAppendTime``) and the replicas (ISR lag, follower
fetch times) still read the system wall clock through ``now_ms``: their times are compared
with record timestamps that clients wrote.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def monotonic_ms(self) -> int:
        """Milliseconds on a clock that never goes back (for deadlines and durations)."""
        ...

    def wall_ms(self) -> int:
        """Milliseconds since the epoch (for timestamps that are stored or shown)."""
        ...


class SystemClock:
    """The machine's clocks: ``time.monotonic_ns`` and ``time.time_ns``, in whole milliseconds."""

    def monotonic_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that moves only when told (Kafka's ``MockTime``): both readings advance together."""

    def __init__(self, monotonic_ms: int = 0, wall_ms: int = 1_700_000_000_000):
        self._monotonic, self._wall = monotonic_ms, wall_ms

    def monotonic_ms(self) -> int:
        return self._monotonic

    def wall_ms(self) -> int:
        return self._wall

    def advance(self, ms: int) -> None:
        """Move time on by ``ms`` milliseconds (never back: a negative step is refused)."""
        if ms < 0:
            raise ValueError(f"A clock does not go back ({ms} ms).")
        self._monotonic += ms
        self._wall += ms

    def __repr__(self) -> str:
        return f"ManualClock(monotonic_ms={self._monotonic}, wall_ms={self._wall})"


SYSTEM: Clock = SystemClock()


def now_ms() -> int:
    """The system wall clock in milliseconds, for code that is not given a ``Clock`` (the log)."""
    return SYSTEM.wall_ms()
