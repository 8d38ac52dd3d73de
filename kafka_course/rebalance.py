"""How long members stop when a consumer joins: classic rebalances against KIP-848.

The classic group protocol moves partitions through a *rebalance*: every member rejoins
(JoinGroup), the group leader computes an assignment, everyone waits for it (SyncGroup).
With an eager assignor (``range``) each member first gives up all its partitions; with
``cooperative-sticky`` (KIP-429) only the ones that move, over two rebalances. The
consumer group protocol of Kafka 4 (KIP-848, ``group.protocol=consumer``) has no
rebalance barrier at all: the broker computes the assignment and tells each member, in
its own heartbeat, which partitions to give up; the others keep consuming.

``join_round()`` measures it the way ``bench/bench_rebalance_pause.py`` does, on a small
scale: a producer writes a record every 5 ms over six partitions, two confluent-kafka
consumers read them, then a third joins. For each member already there the *pause* is
the longest time it received nothing between the newcomer's arrival and one second
after the group settled (two partitions each); for the newcomer, the time to its first
record. ``show_round()`` draws who owned which partition and when each member received
records; ``show_pauses()`` puts the protocols side by side.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from .client_logs import quiet
from .clients import admin, new_topic, producer
from .connection import current_bootstrap
from .i18n import _

PARTITIONS, EVERY_S, POLL_S = 6, 0.005, 0.05
PROTOCOLS = {
    "classic eager": {"partition.assignment.strategy": "range"},
    "classic cooperative": {"partition.assignment.strategy": "cooperative-sticky"},
    "consumer (KIP-848)": {"group.protocol": "consumer"},
}
NAMES = ("m1", "m2", "newcomer")


class Member(threading.Thread):
    """A confluent-kafka consumer polling in its own thread: when each record arrived, and
    which partitions it owned from when (read by other threads through ``assignment()``)."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, settings: dict[str, Any]):
        super().__init__(name=f"member-{name}", daemon=True)
        self.member, self.topic = name, topic
        self.arrivals: list[float] = []
        self.owned: list[tuple[float, frozenset[int]]] = [(time.perf_counter(), frozenset())]
        self.revoked = 0  # partitions taken away by the revoke callback since the last reset
        self._stop_event = threading.Event()
        self.consumer = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": group,
                                        "auto.offset.reset": "latest", "fetch.wait.max.ms": 20,
                                        "client.id": name, **settings}))
        self.consumer.subscribe([topic], on_revoke=self._on_revoke)
        self.start()

    def _on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.revoked += len(partitions)

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                msg = self.consumer.poll(POLL_S)
                if msg is not None and not msg.error():
                    self.arrivals.append(time.perf_counter())
                now = frozenset(tp.partition for tp in self.consumer.assignment())
                if now != self.owned[-1][1]:
                    self.owned.append((time.perf_counter(), now))
        finally:
            self.consumer.close()

    def partitions(self) -> frozenset[int]:
        return self.owned[-1][1]

    def longest_gap(self, start: float, end: float) -> float:
        times = [start] + [t for t in list(self.arrivals) if start < t < end] + [end]
        return max(b - a for a, b in itertools.pairwise(times))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(15)


@dataclass
class Round:
    """One join, measured: times are seconds from the newcomer's start."""
    protocol: str
    pauses: dict[str, float]  # longest silence of each member already there
    newcomer_first: float  # until the newcomer's first record
    stopped: dict[str, int]  # partitions each member already there gave up
    arrivals: dict[str, list[float]] = field(repr=False)
    owned: dict[str, list[tuple[float, frozenset[int]]]] = field(repr=False)
    settled: float = 0.0


def table(rounds: Iterable[Round]) -> str:
    """The rounds as a small table: each member's pause, partitions stopped, the newcomer's wait."""
    lines = [f"{_('protocol'):20} {_('pause m1'):>9} {_('pause m2'):>9} {_('partitions stopped'):>19} "
             f"{_('newcomer waited'):>16}"]
    for r in rounds:
        m1, m2 = (r.pauses[n] * 1000 for n in ("m1", "m2"))
        stopped = _("{m1} and {m2} of 3").format(m1=r.stopped["m1"], m2=r.stopped["m2"])
        lines.append(f"{r.protocol:20} {m1:6.0f} ms {m2:6.0f} ms {stopped:>19} {r.newcomer_first * 1000:13.0f} ms")
    return "\n".join(lines)


def broker_heartbeat_ms(bootstrap: str | None = None, default: int = 5000) -> int:
    """``group.consumer.heartbeat.interval.ms`` of the cluster (Kafka's default: 5000)."""
    from confluent_kafka.admin import ConfigResource
    client = admin(bootstrap)
    broker = min(client.list_topics(timeout=10).brokers)
    resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
    try:
        entries = client.describe_configs([resource])[resource].result(10)
    except Exception:  # noqa: BLE001 - a cluster that hides its configs gets Kafka's default
        return default
    entry = entries.get("group.consumer.heartbeat.interval.ms")
    return int(entry.value) if entry is not None and entry.value else default


def _produce_until(bootstrap: str, topic: str, stop: threading.Event, limit_s: float) -> None:
    p = producer(bootstrap, linger_ms=0)
    deadline, i = time.monotonic() + limit_s, 0
    while not stop.is_set() and time.monotonic() < deadline:
        p.produce(topic, b"x", partition=i % PARTITIONS)
        p.poll(0)
        i += 1
        time.sleep(EVERY_S)
    p.flush(10)


def _until(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.01)


def join_round(protocol: str, heartbeat_ms: int, *, bootstrap: str | None = None, timeout: float = 60) -> Round:
    """Two members of a fresh group read six partitions; a third joins. Measure the pauses."""
    bootstrap = bootstrap or current_bootstrap()
    settings: dict[str, str | int] = dict(PROTOCOLS[protocol])
    if "group.protocol" not in settings:  # the classic members heartbeat as often as KIP-848's do
        settings |= {"heartbeat.interval.ms": heartbeat_ms, "session.timeout.ms": max(6000, 10 * heartbeat_ms)}
    topic, group = new_topic("pause", partitions=PARTITIONS, bootstrap=bootstrap), f"pause-{uuid.uuid4().hex[:6]}"
    stop = threading.Event()
    writer = threading.Thread(target=_produce_until, args=(bootstrap, topic, stop, 3 * timeout), daemon=True)
    writer.start()
    members = [Member("m1", bootstrap, group, topic, settings)]
    time.sleep(heartbeat_ms / 2000)  # the two heartbeat half an interval apart, as real members do
    members.append(Member("m2", bootstrap, group, topic, settings))
    newcomer = None
    try:
        _until(lambda: sorted(len(m.partitions()) for m in members) == [3, 3], timeout, "two members, 3 each")
        time.sleep(0.5 + heartbeat_ms / 2000)  # steady consumption first
        for m in members:
            m.revoked = 0
        newcomer = Member("newcomer", bootstrap, group, topic, settings)
        joined = time.perf_counter()
        everyone = [*members, newcomer]
        _until(lambda: all(len(m.partitions()) == 2 for m in everyone) and newcomer.arrivals, timeout,
               "the newcomer's partitions")
        settled = time.perf_counter()
        time.sleep(1.0)
        end = settled + 1.0
        return Round(protocol, {m.member: m.longest_gap(joined, end) for m in members},
                     newcomer.arrivals[0] - joined, {m.member: m.revoked for m in members},
                     {m.member: [t - joined for t in m.arrivals] for m in everyone},
                     {m.member: [(t - joined, p) for t, p in m.owned] for m in everyone}, settled - joined)
    finally:
        stop.set()
        for m in members + ([newcomer] if newcomer else []):
            m.stop()
        writer.join(15)
        admin(bootstrap).delete_topics([topic])


# -- pictures ------------------------------------------------------------------------------------
def show_round(result: Round, before: float = 1.0, after: float | None = None) -> None:
    """Top: which member owned each partition; bottom: when each member received records."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .views import COLOURS
    end = result.settled + 1.0 if after is None else after
    colours = {name: COLOURS[i] for i, name in enumerate(NAMES)}
    _fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.2), sharex=True, layout="constrained",
                                      gridspec_kw={"height_ratios": [PARTITIONS, len(NAMES)]})
    for name, changes in result.owned.items():
        for (start, parts), (stop, _later) in zip(changes, [*changes[1:], (end, frozenset())]):
            start = max(start, -before)
            for p in parts if stop > start else ():
                top.broken_barh([(start, stop - start)], (p - 0.4, 0.8), color=colours[name])
    top.set_yticks(range(PARTITIONS), [f"p{p}" for p in range(PARTITIONS)])
    top.invert_yaxis()
    top.set_title(_("{protocol}: who owns which partition, and when records arrive").format(protocol=result.protocol))
    top.legend(handles=[Patch(color=c, label=n) for n, c in colours.items()], loc="upper left",
               bbox_to_anchor=(1.01, 1))
    rows = list(result.arrivals)
    bottom.eventplot([[t for t in result.arrivals[n] if -before <= t <= end] for n in rows],
                     colors=[colours[n] for n in rows], linelengths=0.8)
    bottom.set_yticks(range(len(rows)), rows)
    bottom.invert_yaxis()
    for ax in (top, bottom):
        ax.axvline(0, color="black", linestyle=":", linewidth=1)
        ax.set_xlim(-before, end)
    bottom.set_xlabel(_("seconds since the newcomer started (white gaps: nothing received)"))
    plt.show()


def show_pauses(results: Iterable[Round]) -> None:
    """Per protocol: each member's longest pause, and the newcomer's wait for its first record."""
    import matplotlib.pyplot as plt
    results = list(results)
    _fig, ax = plt.subplots(figsize=(9, 3.4), layout="constrained")
    width = 0.26
    for i, r in enumerate(results):
        bars = [*(p * 1000 for p in r.pauses.values()), r.newcomer_first * 1000]
        for j, (value, colour) in enumerate(zip(bars, ("tab:blue", "tab:cyan", "tab:grey"))):
            label = [_("pause of m1"), _("pause of m2"), _("newcomer: first record")][j] if i == 0 else None
            ax.bar(i + (j - 1) * width, value, width, color=colour, label=label)
            ax.annotate(f"{value:.0f}", (i + (j - 1) * width, value), ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(results)), [r.protocol for r in results])
    ax.set_ylabel(_("milliseconds"))
    ax.set_title(_("a third member joins: how long each member received nothing"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    plt.show()
