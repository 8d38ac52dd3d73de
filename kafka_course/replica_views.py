"""Replicas on view: which broker holds which replica of each partition, who leads, who is in sync.

Notebook 05 watches these change while brokers fail. Everything is read with ordinary
Admin requests (kafka-python's ``describe_topics`` and ``describe_cluster``, which carry
the leader epoch and the controller id), so the pictures are true on minikafka and on
real Kafka alike.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from matplotlib.patches import Patch

from .connection import current_bootstrap
from .i18n import _
from .views import LiveView, new_figure

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_kafka_admins: dict[str, Any] = {}

ROLE_COLOURS = {"leader": "#f2a900", "in sync": "#2b7bba", "out of sync": "#e4572e", "down": "#b0b0b0"}


def role_name(role: str) -> str:
    """A role of ``ROLE_COLOURS`` as the legend shows it, in the course's language."""
    return {"leader": _("leader"), "in sync": _("in sync"), "out of sync": _("out of sync"),
            "down": _("down")}[role]


@dataclass(frozen=True)
class ReplicaState:
    """One partition as a Metadata request describes it, leader epoch included."""
    topic: str
    partition: int
    leader: int  # -1 while no replica can lead
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline: tuple[int, ...]  # replicas on brokers that are down

    def role(self, broker: int, live: Iterable[int]) -> str | None:
        """leader, in sync, out of sync, down, or None when the broker holds no replica."""
        if broker not in self.replicas:
            return None
        if broker not in set(live) or broker in self.offline:
            return "down"
        if broker == self.leader:
            return "leader"
        return "in sync" if broker in self.isr else "out of sync"

    def __str__(self) -> str:
        leader = self.leader if self.leader >= 0 else _("none (offline)")
        return _("{topic}-{partition}: leader {leader}, epoch {epoch}, replicas {replicas}, in sync {isr}").format(
            topic=self.topic, partition=self.partition, leader=leader, epoch=self.leader_epoch,
            replicas=list(self.replicas), isr=list(self.isr))


def _kafka_admin(bootstrap: str) -> KafkaAdminClient:
    from kafka.admin import KafkaAdminClient
    if bootstrap not in _kafka_admins:
        _kafka_admins[bootstrap] = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    return _kafka_admins[bootstrap]


def _ask(bootstrap: str | None, question: str, *args: Any) -> Any:
    """Call a KafkaAdminClient method; while brokers come and go, retry with a new client."""
    from kafka.errors import KafkaError
    servers = bootstrap or current_bootstrap()
    deadline = time.monotonic() + 15
    while True:
        try:
            return getattr(_kafka_admin(servers), question)(*args)
        except KafkaError:
            if time.monotonic() > deadline:
                raise
            stale = _kafka_admins.pop(servers, None)
            if stale is not None:
                stale.close()
            time.sleep(0.2)


def replica_states(topic: str, *, bootstrap: str | None = None) -> list[ReplicaState]:
    """Leader, leader epoch, replicas and ISR of every partition of ``topic``."""
    answer = _ask(bootstrap, "describe_topics", [topic])[0]
    return [ReplicaState(topic, p["partition_index"], p["leader_id"], p["leader_epoch"],
                         tuple(p["replica_nodes"]), tuple(p["isr_nodes"]), tuple(p.get("offline_replicas") or ()))
            for p in sorted(answer["partitions"], key=lambda p: p["partition_index"])]


def controller(*, bootstrap: str | None = None) -> int:
    """The broker id the cluster names as its controller (DescribeCluster)."""
    return _ask(bootstrap, "describe_cluster")["controller_id"]


def live_brokers(*, bootstrap: str | None = None) -> list[int]:
    """Ids of the brokers that are up right now, as the cluster's metadata lists them."""
    answer = _ask(bootstrap, "describe_cluster")
    return sorted(b["broker_id"] for b in answer["brokers"])


def wait_for_isr(topic: str, size: int, timeout: float = 30) -> bool:
    """Wait until every partition of ``topic`` has a leader and ``size`` in-sync replicas;
    False (not an exception) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(s.leader >= 0 and len(s.isr) >= size for s in replica_states(topic)):
            return True
        time.sleep(0.2)
    return False


# -- partitions x brokers ---------------------------------------------------------------------
class ReplicaMap(LiveView):
    """A grid of partitions (rows) by brokers (columns): who leads, who follows in sync,
    who lags, and which brokers are down. Drawn from a Metadata request each time."""

    def __init__(self, topics: str | Sequence[str], *, bootstrap: str | None = None, title: str | None = None):
        super().__init__()
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.bootstrap, self.title = bootstrap, title

    def figure(self) -> Figure:
        states = [s for t in self.topics for s in replica_states(t, bootstrap=self.bootstrap)]
        live = live_brokers(bootstrap=self.bootstrap)
        brokers = sorted(set(live) | {b for s in states for b in s.replicas})
        fig, ax = new_figure(1.6 + 1.1 * len(brokers), 0.9 + 0.42 * len(states))
        for col, broker in enumerate(brokers):
            if broker not in live:
                ax.axvspan(col - 0.5, col + 0.5, color="#eeeeee", zorder=0)
        for row, state in enumerate(states):
            for col, broker in enumerate(brokers):
                role = state.role(broker, live)
                if role:
                    _mark(ax, col, row, role)
            note = _("epoch {epoch}").format(epoch=state.leader_epoch) if state.leader >= 0 else _("OFFLINE")
            ax.text(len(brokers) - 0.35, row, note, va="center", fontsize=9,
                    color="black" if state.leader >= 0 else ROLE_COLOURS["out of sync"])
        ax.set_xticks(range(len(brokers)), [(_("broker {broker}") if b in live else _("broker {broker}\n(down)"))
                                            .format(broker=b) for b in brokers])
        ax.set_yticks(range(len(states)), [_row_label(s, len(self.topics)) for s in states])
        ax.set_xlim(-0.5, len(brokers) + 0.4)
        ax.set_ylim(len(states) - 0.5, -0.5)
        ax.tick_params(length=0)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
        handles = [Patch(color=c, label=role_name(r)) for r, c in ROLE_COLOURS.items()]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title=_("replica"))
        try:
            boss = " · " + _("controller: broker {broker}").format(broker=controller(bootstrap=self.bootstrap))
        except Exception:  # noqa: BLE001 - a picture without the controller is still useful
            boss = ""
        ax.set_title(self.title or (", ".join(self.topics) + boss), fontsize=10)
        return fig


def _row_label(state: ReplicaState, topics: int) -> str:
    return f"{state.topic}-{state.partition}" if topics > 1 else _("partition {partition}").format(
        partition=state.partition)


def _mark(ax: Axes, x: float, y: float, role: str) -> None:
    colour = ROLE_COLOURS[role]
    letter = {"leader": "L", "in sync": "F", "out of sync": "F", "down": "×"}[role]
    filled = role != "out of sync"
    ax.scatter([x], [y], s=420, marker="s" if role == "leader" else "o", zorder=2,
               facecolor=colour if filled else "white", edgecolor=colour, linewidth=2)
    ax.text(x, y, letter, ha="center", va="center", zorder=3, fontsize=9, fontweight="bold",
            color="white" if filled else colour)


def show_replicas(topics: str | Sequence[str], **kwargs: Any) -> None:
    """Draw the replica grid of one or more topics, once."""
    ReplicaMap(topics, **kwargs).show()


# -- one partition's replicas over time ------------------------------------------------------------
class IsrTimeline(LiveView):
    """The role of each replica of one partition, sample after sample.

    ``record(label)`` reads the partition's metadata; the figure draws one row per
    broker, coloured by its role (leader, in sync, out of sync, down), with labelled
    events on the time axis, so elections and ISR changes show as colour changes.
    """

    def __init__(self, topic: str, partition: int = 0, *, bootstrap: str | None = None):
        super().__init__()
        self.topic, self.partition, self.bootstrap = topic, partition, bootstrap
        self.samples: list[tuple[float, str | None, ReplicaState, tuple[int, ...]]] = []
        self._start = time.monotonic()

    def record(self, label: str | None = None) -> ReplicaState:
        state = replica_states(self.topic, bootstrap=self.bootstrap)[self.partition]
        live = tuple(live_brokers(bootstrap=self.bootstrap))
        self.samples.append((time.monotonic() - self._start, label, state, live))
        return state

    def changes(self) -> list[str]:
        """One line per sample where leader, epoch or ISR changed (and per labelled sample)."""
        lines, last = [], None
        for t, label, s, _live in self.samples:
            key = (s.leader, s.leader_epoch, s.isr)
            if key != last or label:
                lines.append(_("{time:5.1f}s  leader {leader:>2}  epoch {epoch}  in sync {isr}").format(
                    time=t, leader=s.leader, epoch=s.leader_epoch, isr=list(s.isr))
                             + (f"   <- {label}" if label else ""))
            last = key
        return lines

    def figure(self) -> Figure:
        brokers = sorted({b for _, _, s, live in self.samples for b in (*s.replicas, *live)})
        fig, ax = new_figure(9, 0.9 + 0.45 * max(1, len(brokers)))
        times = [t for t, *_ in self.samples]
        end = (times[-1] if times else 0) + 0.3
        for i, (t, _label, state, live) in enumerate(self.samples):
            until = times[i + 1] if i + 1 < len(times) else end
            for row, broker in enumerate(brokers):
                role = state.role(broker, live)
                if role:
                    ax.broken_barh([(t, until - t)], (row - 0.35, 0.7), color=ROLE_COLOURS[role])
        for t, label in _merged_labels([(t, label) for t, label, *_rest in self.samples if label], end):
            ax.axvline(t, color="black", linewidth=0.8, linestyle=":")
            ax.annotate(label, (t, 1.0), xycoords=("data", "axes fraction"), xytext=(2, 4),
                        textcoords="offset points", rotation=20, fontsize=8, va="bottom")
        ax.set_yticks(range(len(brokers)), [_("broker {broker}").format(broker=b) for b in brokers])
        ax.set_ylim(len(brokers) - 0.5, -0.5)
        ax.set_xlim(0, end)
        ax.set_xlabel(_("seconds"))
        handles = [Patch(color=c, label=role_name(r)) for r, c in ROLE_COLOURS.items()]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
        ax.set_title(_("replicas of {topic}-{partition}").format(topic=self.topic, partition=self.partition),
                     pad=40 if any(label for _, label, *_ in self.samples) else 6)
        return fig


def _merged_labels(labels: list[tuple[float, str]], span: float) -> list[tuple[float, str]]:
    """Events closer than 4% of the time axis share one label, so their texts do not overlap."""
    merged: list[tuple[float, str]] = []
    for t, label in labels:
        if merged and t - merged[-1][0] < 0.04 * span:
            merged[-1] = (merged[-1][0], _("{first}, then {then}").format(first=merged[-1][1], then=label))
        else:
            merged.append((t, label))
    return merged
