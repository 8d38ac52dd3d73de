"""The sign-ups lab 11's check feeds a streaming query, round by round, so the watermark decides.

A watermark says how long Spark waits for late events: after each micro-batch it is
the latest event time seen minus the delay, and in ``append`` mode a window is written
once, when the watermark passes its end; rows for a window that is already past are
dropped. The check writes four rounds, each processed before the next is written
(``processAllAvailable``), so the watermark of one round applies to the next:

1. on time: sign-ups from 0 to 29.5 s (the watermark becomes 19.5 s with a 10 s delay);
2. late: sign-ups at 19.6-19.95 s, 9.55 to 9.9 s behind the latest, which a 10 s
   watermark still accepts (window 10-20 s is not closed yet), then on-time ones up
   to 40.5 s (watermark 30.5 s);
3. too late: sign-ups at 29.6-29.95 s, more than 10.5 s behind, for the window 20-30 s
   that a 10 s watermark has closed, then one sign-up at 200 s (watermark 190 s);
4. one more sign-up at 201 s, so a batch runs with that watermark and writes every
   window up to 50 s.

A delay under 9.5 s drops round 2's late rows; one over 10.5 s counts round 3's; one
far longer writes no window at all. Times are seconds after ``START``. Each round's
late rows are written and acknowledged before its on-time rows, so a micro-batch never
sees the on-time rows without the late ones.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, UTC

from ..i18n import _

START = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
WINDOW_SECONDS = 10
DELAY_SECONDS = 10


@dataclass(frozen=True)
class Round:
    name: str
    late: tuple[dict, ...]  # written first
    on_time: tuple[dict, ...]


def _steps(first: float, last: float, step: float) -> list[float]:
    count = round((last - first) / step)
    return [round(first + i * step, 3) for i in range(count + 1)]


def rounds(seed: int = 2024) -> list[Round]:
    """The four rounds (see the module docstring), with seeded people."""
    from ..fakeusers import FakeUsers
    people = FakeUsers(seed=seed)

    def at(seconds: list[float]) -> tuple[dict, ...]:
        return tuple({**next(people), "signup_ts": _iso(START + s)} for s in seconds)
    return [Round(_("on time"), (), at(_steps(0, 29.5, 0.25))),
            Round(_("9.6 to 9.9 s late"), at(_steps(19.6, 19.95, 0.05)), at(_steps(30, 40.5, 0.25))),
            Round(_("10.6 to 10.9 s late"), at(_steps(29.6, 29.95, 0.05)), at([200.0])),
            Round(_("the clock moves on"), (), at([201.0]))]


def _iso(epoch_seconds: float) -> str:
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def seconds_of(event: dict) -> float:
    """An event's sign-up time, in seconds after ``START``."""
    return datetime.fromisoformat(event["signup_ts"].replace("Z", "+00:00")).timestamp() - START


def window_of(event: dict) -> int:
    """The start of the event's 10-second window, in seconds after ``START``."""
    return int(seconds_of(event) // WINDOW_SECONDS * WINDOW_SECONDS)


def expected(plan: list[Round]) -> Counter:
    """(window start, decade) -> sign-ups, for what a 10-second watermark writes by the end.

    Rounds 1 and 2 count in full; round 3's late rows are dropped; the sign-ups at 200
    and 201 s are in a window that no watermark has passed yet.
    """
    counted = [e for r in plan[:2] for e in (*r.late, *r.on_time)]
    return Counter((window_of(e), e["registered_year"] // 10 * 10) for e in counted)


def window_total(counts: Counter, start: int) -> int:
    return sum(n for (w, _decade), n in counts.items() if w == start)


def write(bootstrap: str, topic: str, events: tuple[dict, ...]) -> None:
    """Write ``events`` and wait until the broker has every one of them."""
    from ..clients import producer
    writer = producer(bootstrap, linger_ms=5)
    for event in events:
        writer.produce(topic, json.dumps(event, ensure_ascii=False).encode(), event["user_id"].encode())
    if writer.flush(30):
        raise RuntimeError(f"could not write the check's sign-ups to {topic}")


def new_topic(bootstrap: str) -> str:
    from ..clients import new_topic as create
    return create("lab11-check", partitions=3, bootstrap=bootstrap)
