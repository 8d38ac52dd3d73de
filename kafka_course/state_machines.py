"""State machines declared as data, drawn as diagrams; and the one state a notebook peeks at.

The group and transaction coordinators keep their rules as ``(from, event, to)``
tables (``minikafka.groups.states``, ``minikafka.transactions.states``). These
functions draw such a table, so the diagram can never disagree with the code.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .handle import cluster
from .views import new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# -- state machines declared as data -------------------------------------------------------------
BOX_H = 0.3  # half the height of a state's box, in data units (widths follow the names)


def show_state_machine(transitions: Sequence[tuple[Any, str, Any]], *, start: Any, title: str = "") -> None:
    """Draw a ``(from, event, to)`` table as a diagram (the table is the only source)."""
    import matplotlib.pyplot as plt
    from IPython.display import display
    fig = state_machine_figure(transitions, start=start, title=title)
    display(fig)
    plt.close(fig)


def state_machine_figure(transitions: Sequence[tuple[Any, str, Any]], *, start: Any, title: str = "") -> Figure:
    """States in columns by distance from ``start``. Arrows between neighbouring columns
    are straight; arrows that go back or skip a column arc above (or below) the states, and
    arcs of the same event into the same state share one height and one label."""
    layers = _layers(transitions, start)
    column = {state: c for c, states in enumerate(layers) for state in states}
    where = _positions(layers)
    names = {state: _box_text(state) for state in where}
    half = {state: 0.2 + 0.075 * max(map(len, names[state].split("\n"))) for state in where}
    edges: dict[tuple[Any, Any], list[str]] = {}
    for src, event, dst in transitions:
        events = edges.setdefault((src, dst), [])
        if event not in events:
            events.append(event)
    top = max(y for _, y in where.values()) + BOX_H
    bottom = min(y for _, y in where.values()) - BOX_H
    right = max(x for x, _ in where.values()) + 1.2
    arcs = {"up": 0, "down": 0}
    bundles: dict[tuple[Any, str, str], float] = {}  # (to, label, side) -> the apex its arcs share
    drawn: list[tuple[Callable[..., None], tuple[Any, ...]]] = []  # (how to draw an edge, its arguments)
    for (src, dst), events in sorted(edges.items(), key=lambda e: abs(column[e[0][1]] - column[e[0][0]])):
        (xa, ya), (xb, yb) = where[src], where[dst]
        label = "\n".join(e.replace(" / ", " /\n") for e in events)
        side = "up" if (ya + yb) / 2 >= 0 else "down"
        if src == dst:
            drawn.append((_loop, (xa, ya, label, side)))
        elif column[dst] == column[src] + 1:
            drawn.append((_straight, ((xa + half[src], ya), (xb - half[dst], yb), label)))
        elif (dst, label, side) in bundles:  # the same event into the same state: one level, one label
            drawn.append((_arc, ((xa, ya), (xb, yb), bundles[(dst, label, side)], "", side)))
        else:
            level = arcs[side]
            arcs[side] += 1
            apex = top + 1.0 + 0.8 * level if side == "up" else bottom - 1.0 - 0.8 * level
            bundles[(dst, label, side)] = apex
            drawn.append((_arc, ((xa, ya), (xb, yb), apex, label, side)))
    low, high = bottom - 0.9 - 0.8 * arcs["down"], top + 0.9 + 0.8 * arcs["up"]
    fig, ax = new_figure(0.72 * (right + 1.4), 0.8 + 0.72 * (high - low))
    for draw, args in drawn:
        draw(ax, *args)
    for state, (x, y) in where.items():
        first = state == start
        ax.text(x, y, names[state], ha="center", va="center", fontsize=8, fontweight="bold", zorder=3,
                color="white" if first else "black",
                bbox=dict(boxstyle="round,pad=0.4", facecolor="#2b7bba" if first else "#dceaf6", edgecolor="#2b7bba"))
    ax.set_aspect("equal")
    ax.set_xlim(-1.2, right)
    ax.set_ylim(low - 0.2, high + 0.2)
    ax.axis("off")
    ax.set_title(title, fontsize=11)
    return fig


def _box_text(state: Any) -> str:
    name = getattr(state, "name", str(state))
    return name.replace("_", "\n", 1) if len(name) > 11 else name


def _layers(transitions: Sequence[tuple[Any, str, Any]], start: Any) -> list[list[Any]]:
    """Breadth-first layers from ``start``; states with no way out go in a last layer."""
    states = list(dict.fromkeys([s for s, _, _ in transitions] + [d for _, _, d in transitions]))
    depth = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for src, _, dst in transitions:
            if src == here and dst not in depth:
                depth[dst] = depth[here] + 1
                queue.append(dst)
    last = max(depth.values()) + 1
    for s in states:
        if s != start and all(src != s or dst == s for src, _, dst in transitions):
            depth[s] = last  # a sink (Dead) goes at the far right
        depth.setdefault(s, last)
    return [[s for s in states if depth[s] == d] for d in sorted(set(depth.values()))]


def _positions(layers: list[list[Any]]) -> dict[Any, tuple[float, float]]:
    return {state: (column * 3.7, ((len(states) - 1) / 2 - i) * 1.5)
            for column, states in enumerate(layers) for i, state in enumerate(states)}


def _edge_label(ax: Axes, x: float, y: float, label: str, **kw: Any) -> None:
    ax.text(x, y, label, ha="center", fontsize=6.5, color="#333333", zorder=4,
            bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.9), **kw)


def _path_arrow(ax: Axes, points: list[tuple[float, float]]) -> None:
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path
    codes = [Path.MOVETO] + [Path.CURVE3] * (len(points) - 1) if len(points) == 3 else [Path.MOVETO, Path.LINETO]
    ax.add_patch(FancyArrowPatch(path=Path(points, codes), arrowstyle="-|>", mutation_scale=10,
                                 color="#555555", linewidth=1.0, zorder=1))


def _straight(ax: Axes, a: tuple[float, float], b: tuple[float, float], label: str) -> None:
    _path_arrow(ax, [a, b])
    _edge_label(ax, (a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.08, label, va="bottom")


def _arc(ax: Axes, a: tuple[float, float], b: tuple[float, float], apex: float, label: str, side: str) -> None:
    sign = 1 if side == "up" else -1
    nudge = 0.25 if b[0] < a[0] else -0.25  # leave and enter on the facing halves of the boxes
    p0 = (a[0] - nudge, a[1] + sign * BOX_H)
    p2 = (b[0] + nudge, b[1] + sign * BOX_H)
    control = ((p0[0] + p2[0]) / 2, 2 * apex - (p0[1] + p2[1]) / 2)
    _path_arrow(ax, [p0, control, p2])
    if label:
        _edge_label(ax, (p0[0] + p2[0]) / 2, apex, label, va="center")


def _loop(ax: Axes, x: float, y: float, label: str, side: str) -> None:
    sign = 1 if side == "up" else -1
    p0, p2 = (x - 0.45, y + sign * BOX_H), (x + 0.45, y + sign * BOX_H)
    _path_arrow(ax, [p0, (x, y + sign * (BOX_H + 1.1)), p2])
    _edge_label(ax, x, y + sign * (BOX_H + 0.6), label, va="bottom" if side == "up" else "top")


# -- looking inside minikafka -------------------------------------------------------------------------
def transaction_state(transactional_id: str) -> str:
    """The coordinator's state of a transactional id, e.g. ``ONGOING`` (minikafka only)."""
    return cluster().embedded.transaction_state(transactional_id)
