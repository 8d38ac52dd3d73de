"""Pictures of live cluster state: partition offsets, group assignments, consumer lag.

Every view reads the cluster through ordinary client requests (ListOffsets, OffsetFetch,
a consumer's own assignment), so it draws the same picture on minikafka and on real
Kafka. A view is shown once with ``show()`` and redrawn in place with ``refresh()``,
which updates the same output in JupyterLab and simply records a new image when a
notebook runs headless (nbval, papermill). Figures are plain matplotlib figures.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import matplotlib
from matplotlib.colors import ListedColormap

from .clients import lag, offsets, partitions_of
from .i18n import _

if TYPE_CHECKING:
    from IPython.display import DisplayHandle
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_TAB10 = matplotlib.colormaps["tab10"]
assert isinstance(_TAB10, ListedColormap)  # a qualitative map: a list of colours
# matplotlib annotates .colors as any array-like; tab10's is a tuple of RGB tuples
COLOURS = cast("tuple[tuple[float, float, float], ...]", _TAB10.colors)


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class LiveView:
    """A figure that can be shown once and redrawn in the same place."""

    def __init__(self) -> None:
        self._handle: DisplayHandle | None = None

    def figure(self) -> Figure:  # pragma: no cover - every view defines it
        raise NotImplementedError

    def show(self) -> None:
        """Draw the view below the cell."""
        self._handle = _display(self.figure())

    def refresh(self) -> None:
        """Redraw in the place of the last ``show()`` (or show it, the first time)."""
        if self._handle is None:
            self.show()
        else:
            _display(self.figure(), self._handle)


def _display(fig: Figure, handle: DisplayHandle | None = None) -> DisplayHandle | None:
    import matplotlib.pyplot as plt
    from IPython.display import display
    if handle is None:
        handle = display(fig, display_id=True)
    else:
        handle.update(fig)
    plt.close(fig)
    return handle


def new_figure(width: float, height: float) -> tuple[Figure, Axes]:
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=(width, height), layout="constrained")


# -- a topic's partitions -------------------------------------------------------------------
class OffsetsView(LiveView):
    """One bar per partition: records already deleted (grey) and records stored (blue)."""

    def __init__(self, topic: str, *, bootstrap: str | None = None, title: str | None = None):
        super().__init__()
        self.topic, self.bootstrap, self.title = topic, bootstrap, title

    def figure(self) -> Figure:
        parts = offsets(self.topic, bootstrap=self.bootstrap)
        fig, ax = new_figure(8, 0.5 + 0.45 * len(parts))
        rows = [_("partition {partition}").format(partition=o.partition) for o in parts]
        ax.barh(rows, [o.log_start_offset for o in parts], color="lightgrey", label=_("deleted (below log start)"))
        ax.barh(rows, [o.records for o in parts], left=[o.log_start_offset for o in parts],
                color=COLOURS[0], label=_("stored records"))
        top = max([o.high_watermark for o in parts] + [1])
        for row, o in zip(rows, parts):  # the offsets stored, as the text says them: 0..20 for 21 records
            stored = f"{o.log_start_offset}..{o.high_watermark - 1}" if o.records else _("empty")
            # y is the bar's label: a categorical axis takes it, though Axes.text is typed for a float
            ax.text(o.high_watermark + top * 0.01, row, stored, va="center")  # type: ignore[arg-type]
        ax.set_xlim(0, top * 1.2)
        ax.invert_yaxis()
        ax.set_xlabel(_("offset (log start offset .. high watermark)"))
        ax.set_title(self.title or _("{topic}: {count} records").format(topic=self.topic,
                                                                         count=sum(o.records for o in parts)))
        if any(o.log_start_offset for o in parts):
            ax.legend(loc="lower right")
        return fig


def show_offsets(topic: str, **kwargs: Any) -> None:
    """Draw a topic's partitions with their offsets, once."""
    OffsetsView(topic, **kwargs).show()


# -- a group's assignment over time -------------------------------------------------------
def _assigned(consumer: Any, topic: str) -> list[int]:
    """Partitions of ``topic`` a kafka-python or confluent-kafka consumer owns right now."""
    for _attempt in range(3):  # another thread may be changing the set while we copy it
        try:
            return sorted(tp.partition for tp in consumer.assignment() if tp.topic == topic)
        except RuntimeError:
            continue
    return []


class AssignmentTimeline(LiveView):
    """Which member owns which partition, sample after sample, across rebalances.

    Give it the group's consumers by name; ``record()`` asks each one for its current
    assignment (or takes an assignment you pass), and the figure draws one row per
    partition coloured by its owner, so a rebalance shows as a change of colour.
    """

    def __init__(self, topic: str, members: Mapping[str, Any] | None = None, *, bootstrap: str | None = None):
        super().__init__()
        self.topic = topic
        self.members = dict(members or {})
        self.partitions = partitions_of(topic, bootstrap=bootstrap)
        self.samples: list[tuple[float, str | None, dict[int, str]]] = []
        self._start = time.monotonic()
        self._colour: dict[str, Any] = {}

    def add(self, name: str, consumer: Any) -> None:
        self.members[name] = consumer

    def remove(self, name: str) -> None:
        self.members.pop(name, None)

    def record(self, label: str | None = None, assignment: Mapping[str, Iterable[int]] | None = None) -> dict[int, str]:
        """Take one sample; ``label`` marks an event ("bob joins") on the time axis."""
        if assignment is None:
            assignment = {name: _assigned(c, self.topic) for name, c in list(self.members.items())}
        owners = {p: name for name, parts in assignment.items() for p in parts}
        self.samples.append((time.monotonic() - self._start, label, owners))
        return owners

    def colour(self, member: str) -> tuple[float, float, float]:
        if member not in self._colour:
            self._colour[member] = COLOURS[len(self._colour) % len(COLOURS)]
        return self._colour[member]

    def figure(self) -> Figure:
        fig, ax = new_figure(9, 0.8 + 0.4 * len(self.partitions))
        times = [t for t, _label, _owners in self.samples]
        end = (times[-1] if times else 0) + max(0.5, 0.05 * (times[-1] if times else 1))
        for i, (t, label, owners) in enumerate(self.samples):
            until = times[i + 1] if i + 1 < len(times) else end
            for p in self.partitions:
                if p in owners:
                    ax.broken_barh([(t, until - t)], (p - 0.4, 0.8), color=self.colour(owners[p]))
            if label:
                ax.axvline(t, color="black", linewidth=0.8, linestyle=":")
                ax.annotate(label, (t, 1.0), xycoords=("data", "axes fraction"), xytext=(2, 4),
                            textcoords="offset points", rotation=25, fontsize=8, va="bottom")
        ax.set_yticks(self.partitions, [_("partition {partition}").format(partition=p) for p in self.partitions])
        ax.set_ylim(-0.6, len(self.partitions) - 0.4)
        ax.invert_yaxis()
        ax.set_xlim(0, end)
        ax.set_xlabel(_("seconds (white: no member owns the partition, e.g. during a rebalance)"))
        handles = [matplotlib.patches.Patch(color=c, label=m) for m, c in self._colour.items()]
        if handles:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.set_title(_("who owns which partition of {topic}").format(topic=self.topic),
                     pad=40 if any(s[1] for s in self.samples) else 6)
        return fig

    def table(self) -> str:
        """The samples as text, one line each."""
        lines = []
        for t, label, owners in self.samples:
            cells = "  ".join(f"p{p}:{owners.get(p, '-')}" for p in self.partitions)
            lines.append(f"{t:6.1f}s  {cells}" + (f"   <- {label}" if label else ""))
        return "\n".join(lines)

    def explore(self) -> None:
        """A slider to step through the samples (printed text when there is no notebook)."""
        if not self.samples:
            print(_("No samples yet: call record() first."))
            return
        if not _in_kernel():
            print(self.table())
            return
        import ipywidgets as widgets
        from IPython.display import display
        slider = widgets.IntSlider(value=len(self.samples) - 1, min=0, max=len(self.samples) - 1,
                                   description=_("sample"), continuous_update=True)
        board = widgets.HTML(self._html(slider.value))
        slider.observe(lambda change: setattr(board, "value", self._html(change["new"])), names="value")
        print(_("{count} samples; drag the slider to replay them.").format(count=len(self.samples)))
        display(widgets.VBox([slider, board]))

    def _html(self, i: int) -> str:
        t, label, owners = self.samples[i]
        cells = []
        for p in self.partitions:
            owner = owners.get(p)
            colour = matplotlib.colors.to_hex(self.colour(owner)) if owner else "#ffffff"
            cells.append(f"<td style='background:{colour};color:white;padding:4px 10px'>"
                         f"p{p}<br>{html.escape(owner or '-')}</td>")
        caption = f"t = {t:.1f} s" + (f" — {html.escape(label)}" if label else "")
        return f"<div>{caption}</div><table><tr>{''.join(cells)}</tr></table>"


# -- consumer lag over time ------------------------------------------------------------------
class LagTimeline(LiveView):
    """Records not yet committed by a group, per partition, sampled over time."""

    def __init__(self, group: str, topic: str, *, bootstrap: str | None = None):
        super().__init__()
        self.group, self.topic, self.bootstrap = group, topic, bootstrap
        self.samples: list[tuple[float, dict[int, int]]] = []
        self._start = time.monotonic()

    def record(self) -> dict[int, int]:
        now = lag(self.group, self.topic, bootstrap=self.bootstrap)
        self.samples.append((time.monotonic() - self._start, now))
        return now

    def figure(self) -> Figure:
        fig, ax = new_figure(8, 3.2)
        times = [t for t, _lags in self.samples]
        partitions = sorted({p for _t, lags in self.samples for p in lags})
        for p in partitions:
            ax.plot(times, [lags.get(p, 0) for _t, lags in self.samples], marker=".",
                    label=_("partition {partition}").format(partition=p), color=COLOURS[p % len(COLOURS)])
        ax.plot(times, [sum(lags.values()) for _t, lags in self.samples], color="black", linewidth=2,
                label=_("total"))
        ax.set_xlabel(_("seconds"))
        ax.set_ylabel(_("lag (records)"))
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.set_title(_("lag of group {group} on {topic}").format(group=self.group, topic=self.topic))
        return fig
