"""What one network link does to its traffic, decided without any I/O (sans-I/O).

A :class:`LinkRules` holds the state a test or a teacher sets on one direction-aware
link: passing, cut as a network partition (``partition``: bytes are held and nothing
arrives, the way a lost route looks to TCP, so a Kafka client's ``request.timeout.ms``
fires), cut with resets (``reset``: connections are closed), a delay with jitter per
direction, and a fraction of new connections dropped. The proxy in
:mod:`minikafka.netfault.proxy` asks it what to do; nothing here touches a socket, so
the rules are tested and reasoned about on their own.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, field


class Mode(enum.Enum):
    """The state of a link: the names a teacher types on the command line."""

    PASS = "pass"
    PARTITION = "partition"  # blackhole: connections stall, bytes wait, nothing is refused
    RESET = "reset"  # every connection is closed, new ones too


class Verdict(enum.Enum):
    """What happens to a connection that has just been accepted."""

    FORWARD = "forward"  # connect to the node and pump bytes
    HOLD = "hold"  # keep it open, send nothing on, until the link heals (a partition)
    CLOSE = "close"  # close it at once (a reset, or a dropped connection)


class Direction(enum.Enum):
    """Which way bytes go on a link from ``source`` to ``target``."""

    REQUEST = "request"  # from the connecting node to the node it connects to
    RESPONSE = "response"  # back


@dataclass
class LinkRules:
    """The rules of one link. ``seed`` makes jitter and dropped connections repeatable."""

    mode: Mode = Mode.PASS
    delay_ms: dict[Direction, float] = field(default_factory=lambda: {d: 0.0 for d in Direction})
    jitter_ms: dict[Direction, float] = field(default_factory=lambda: {d: 0.0 for d in Direction})
    drop_rate: float = 0.0
    seed: int | None = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    # -- changing the rules --------------------------------------------------------------
    def set_mode(self, mode: Mode | str) -> None:
        self.mode = Mode(mode)

    def set_delay(self, ms: float, jitter_ms: float = 0.0, direction: Direction | str | None = None) -> None:
        """Delay bytes by ``ms`` ± ``jitter_ms`` in one direction, or both when none is given."""
        if ms < 0 or jitter_ms < 0:
            raise ValueError(f"a delay is zero or more milliseconds, not {ms} ± {jitter_ms}")
        for d in [Direction(direction)] if direction else list(Direction):
            self.delay_ms[d], self.jitter_ms[d] = float(ms), float(jitter_ms)

    def set_drop_rate(self, fraction: float) -> None:
        """Drop this fraction (0 to 1) of new connections, as a lossy network or a full backlog does."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"the fraction of connections to drop is between 0 and 1, not {fraction}")
        self.drop_rate = float(fraction)

    def heal(self) -> None:
        """Back to a clean link: passing, no delay, nothing dropped."""
        self.mode = Mode.PASS
        self.set_delay(0.0)
        self.drop_rate = 0.0

    # -- decisions -----------------------------------------------------------------------
    def on_connect(self) -> Verdict:
        """The verdict for a connection just accepted."""
        if self.mode is Mode.RESET:
            return Verdict.CLOSE
        if self.drop_rate and self._rng.random() < self.drop_rate:
            return Verdict.CLOSE
        return Verdict.HOLD if self.mode is Mode.PARTITION else Verdict.FORWARD

    @property
    def flowing(self) -> bool:
        """Whether bytes move now (a partition holds them; a reset closes the connection)."""
        return self.mode is Mode.PASS

    def delay_for(self, direction: Direction) -> float:
        """Seconds to hold the next chunk going ``direction`` (never negative)."""
        base, jitter = self.delay_ms[direction], self.jitter_ms[direction]
        ms = base + (self._rng.uniform(-jitter, jitter) if jitter else 0.0)
        return max(0.0, ms) / 1000.0

    def describe(self) -> dict:
        return {
            "mode": self.mode.value,
            "drop_rate": self.drop_rate,
            "delay_ms": {d.value: self.delay_ms[d] for d in Direction},
            "jitter_ms": {d.value: self.jitter_ms[d] for d in Direction},
        }
