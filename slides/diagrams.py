"""Slide diagrams, generated, never drawn by hand.

Two sources, so that a picture can never drift away from what it shows:

* the broker's own state tables: the consumer group states
  (``minikafka.groups.states.TRANSITIONS``) and the transaction states
  (``minikafka.transactions.states.TRANSITIONS``), laid out by Graphviz ``dot``
  (Debian package ``graphviz``; without it, the same rows are drawn as a table);
* a live embedded minikafka cluster of three brokers: where keyed records landed in a
  topic's partitions, leaders, followers and the ISR before and after a broker stops,
  and which member of which consumer group owns which partition, as the group
  coordinator describes it.

``python -m slides.diagrams OUT_DIR`` writes them all as SVG files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .deck import N_
from .svg import INK, LIGHT, MUTED, PALETTE, Canvas


@dataclass(frozen=True)
class Diagram:
    name: str  # file name without .svg
    title: str  # English, marked with N_(): a deck in another language shows its translation
    caption: str  # English, with {placeholders} filled from ``values``
    svg: str
    values: dict = field(default_factory=dict)

    def said(self, _: Callable[[str], str] = str) -> tuple[str, str]:
        """The title and the caption in the language of ``_`` (a deck's ``words()``)."""
        return _(self.title), _(self.caption).format(**self.values)


# -- state machines, from the broker's tables -----------------------------------------------------
def _state_name(state) -> str:
    """Kafka's spelling: group states are already "PreparingRebalance"; PREPARE_COMMIT -> PrepareCommit."""
    text = str(state.value) if isinstance(state.value, str) else state.name
    return text if not text.isupper() else "".join(part.capitalize() for part in text.split("_"))


def state_machine_dot(transitions: Iterable[tuple], initial, final) -> str:
    """A Graphviz digraph with one edge per (from, to) pair, labelled with every event."""
    events: dict[tuple[str, str], list[str]] = {}
    for src, event, dst in transitions:
        events.setdefault((_state_name(src), _state_name(dst)), []).append(event.replace("_", " "))
    states = dict.fromkeys(s for pair in events for s in pair)
    lines = ["digraph states {", '  rankdir=LR; bgcolor="transparent"; nodesep=0.45; ranksep=0.7;',
             f'  node [shape=box, style="rounded,filled", fillcolor="{LIGHT}", color="{PALETTE[0]}", '
             'fontname="Helvetica", fontsize=13, penwidth=1.5];',
             f'  edge [fontname="Helvetica", fontsize=10, color="{MUTED}", fontcolor="{INK}"];',
             '  start [shape=point, width=0.14, color="#222222", label=""];',
             f'  start -> "{_state_name(initial)}";']
    for state in states:
        if state == _state_name(final):
            lines.append(f'  "{state}" [peripheries=2, fillcolor="#eeeeee", color="{MUTED}"];')
    for (src, dst), names in events.items():
        label = "\\n".join(dict.fromkeys(names))
        lines.append(f'  "{src}" -> "{dst}" [label="{label}"];')
    return "\n".join([*lines, "}"]) + "\n"


def render_dot(source: str) -> str | None:
    """SVG from Graphviz, or None when ``dot`` is not installed."""
    if shutil.which("dot") is None:
        return None
    svg = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, check=True,
                         timeout=60).stdout
    return svg[svg.index("<svg"):]  # drop the XML prolog and the DOCTYPE line


def transition_table_svg(transitions: Iterable[tuple]) -> str:
    """The fallback without Graphviz: the same rows as a table."""
    rows = [(_state_name(s), e.replace("_", " "), _state_name(d)) for s, e, d in transitions]
    canvas = Canvas(900, 40 + 26 * len(rows))
    for x, head in [(20, "from"), (260, "event"), (680, "to")]:
        canvas.text(x, 20, head, 15, anchor="start", weight="bold")
    for i, (src, event, dst) in enumerate(rows):
        y = 48 + 26 * i
        canvas.text(20, y, src, anchor="start")
        canvas.text(260, y, event, 13, MUTED, anchor="start")
        canvas.text(680, y, dst, anchor="start")
    return canvas.render()


def state_machine(name: str, title: str, module: str, transitions, initial, final) -> Diagram:
    svg = render_dot(state_machine_dot(transitions, initial, final))
    caption = (N_("All {rows} rows of {module}.TRANSITIONS, laid out by Graphviz.") if svg else
               N_("All {rows} rows of {module}.TRANSITIONS, listed (install Graphviz for the graph)."))
    return Diagram(name, title, caption, svg or transition_table_svg(transitions),
                   {"rows": len(transitions), "module": module})


def state_machines() -> list[Diagram]:
    from minikafka.groups import states as groups
    from minikafka.transactions import states as txn
    return [
        state_machine("group-states", N_("Consumer group states"), "minikafka.groups.states",
                      groups.TRANSITIONS, groups.GroupState.EMPTY, groups.GroupState.DEAD),
        state_machine("transaction-states", N_("Transaction states"), "minikafka.transactions.states",
                      txn.TRANSITIONS, txn.TxnState.EMPTY, txn.TxnState.DEAD),
    ]


# -- pictures of a live cluster -----------------------------------------------------------------
KEYS = ["alice", "bob", "carol", "dave"]


def partitions_svg(topic: str, records: list[tuple[int, int, str]], ends: dict[int, int]) -> str:
    """One row per partition, one cell per record (offset above, key inside)."""
    longest = max(ends.values(), default=0)
    canvas = Canvas(max(720, 210 + 64 * (longest + 1)), 60 + 80 * len(ends) + 40)
    colour = {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(KEYS)}
    for row, partition in enumerate(sorted(ends)):
        y = 40 + 80 * row
        canvas.text(20, y + 22, f"partition {partition}", 16, anchor="start", weight="bold")
        for partition_, offset, key in records:
            if partition_ == partition:
                x = 140 + 64 * offset
                canvas.text(x + 28, y - 8, offset, 12, MUTED)
                canvas.rect(x, y, 56, 44, fill=colour.get(key, LIGHT), stroke="white")
                canvas.text(x + 28, y + 22, key, 13, "white", weight="bold")
        x = 140 + 64 * ends[partition]
        canvas.rect(x, y, 56, 44, dashed=True, stroke=MUTED)
        canvas.text(x + 28, y + 22, "next", 12, MUTED)
    canvas.text(20, canvas.height - 20, f"topic {topic}, keyed by customer (murmur2 partitioner); "
                "dashed: the next offset, the high watermark", 13, MUTED, anchor="start")
    return canvas.render()


def _replica_box(canvas: Canvas, x: int, y: int, topic: str, partition: int, role: str, leo, faded: bool):
    styles = {"leader": (PALETTE[0], "white", False), "in sync": (LIGHT, INK, False),
              "out of sync": ("white", MUTED, True)}
    fill, ink, dashed = styles[role]
    opacity = 0.45 if faded else 1.0
    canvas.rect(x, y, 200, 52, fill=fill, stroke=PALETTE[0] if role != "out of sync" else MUTED,
                dashed=dashed, opacity=opacity)
    canvas.text(x + 100, y + 17, f"{topic}-{partition}  {role}", 14, ink, weight="bold", opacity=opacity)
    canvas.text(x + 100, y + 37, f"log end offset {leo}", 12, ink, opacity=opacity)


def replication_svg(topic: str, panels: list[tuple[str, list[dict], dict, set[int]]]) -> str:
    """Side by side panels of brokers, each listing its replicas: leader, in sync or not."""
    brokers = sorted({b for _, states, _, _ in panels for s in states for b in s["replicas"]})
    rows = max(sum(b in s["replicas"] for s in panels[0][1]) for b in brokers)
    panel_w = 40 + 220 * len(brokers)
    canvas = Canvas(panel_w * len(panels) + 20, 110 + 62 * rows + 30)
    for i, (label, states, leos, down) in enumerate(panels):
        x0 = 20 + i * panel_w
        canvas.text(x0 + panel_w / 2 - 20, 20, label, 18, weight="bold")
        for col, broker in enumerate(brokers):
            x = x0 + 220 * col
            canvas.rect(x, 40, 210, 62 * rows + 50, fill="#fafafa" if broker not in down else "#eeeeee",
                        stroke=MUTED, dashed=broker in down)
            canvas.text(x + 105, 58, f"broker {broker}" + (" (stopped)" if broker in down else ""), 15,
                        MUTED if broker in down else INK, weight="bold")
            hosted = [s for s in states if broker in s["replicas"]]
            for row, state in enumerate(hosted):
                role = ("leader" if state["leader"] == broker else
                        "in sync" if broker in state["isr"] else "out of sync")
                _replica_box(canvas, x + 5, 76 + 62 * row, topic, state["partition"], role,
                             leos.get((state["partition"], broker), "?"), broker in down)
    canvas.text(20, canvas.height - 16, "filled: leader · light: follower in the ISR · dashed: out of sync",
                13, MUTED, anchor="start")
    return canvas.render()


def groups_svg(topic: str, partitions: list[int], groups: dict[str, dict[str, list[int]]]) -> str:
    """Partitions on the left, each group's members on the right, a line per ownership."""
    members = [(g, m) for g, owned in groups.items() for m in owned]
    height = max(60 + 70 * len(partitions), 60 + 64 * len(members) + 30 * len(groups))
    canvas = Canvas(900, height + 30)
    where = {}
    for i, p in enumerate(partitions):
        y = 50 + 70 * i
        canvas.rect(40, y, 170, 46, fill=LIGHT, stroke=PALETTE[0])
        canvas.text(125, y + 23, f"{topic} · p{p}", 15, weight="bold")
        where[p] = y + 23
    y = 40
    for gi, (group, owned) in enumerate(groups.items()):
        colour = PALETTE[(gi + 1) % len(PALETTE)]
        canvas.text(760, y + 4, f"group {group}", 15, colour, weight="bold")
        y += 20
        for member, parts in owned.items():
            canvas.rect(660, y, 200, 46, stroke=colour, width=2)
            canvas.text(760, y + 23, member, 14)
            for p in parts:
                canvas.curve(212, where[p], 656, y + 23, colour)
            y += 64
        y += 10
    canvas.text(40, canvas.height - 14, "every group reads every partition; within a group each partition "
                "has exactly one owner (from DescribeGroups)", 13, MUTED, anchor="start")
    return canvas.render()


def live_diagrams() -> list[Diagram]:
    """Start a 3-broker minikafka, make something happen, and draw what the cluster says."""
    from confluent_kafka import Producer

    from minikafka import Cluster
    from kafka_course.client_logs import quiet
    from kafka_course.ecosystem._kafka import read_to_end

    with Cluster(brokers=3, in_memory=True) as cluster:
        bootstrap = cluster.bootstrap_servers
        cluster.create_topic("orders", partitions=3, replication_factor=3)
        # quiet(): librdkafka's log lines (a FAIL per connection when broker 2 stops) go to Python
        # logging, not to the terminal of whoever builds the decks
        producer = Producer(quiet({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 2}))
        for i in range(14):
            producer.produce("orders", f"order {i}".encode(), KEYS[(i * 7 + i // 3) % len(KEYS)].encode())
        producer.flush(15)
        records = [(m.partition(), m.offset(), m.key().decode()) for m in read_to_end(bootstrap, "orders")]
        ends = {p: 1 + max([o for q, o, _ in records if q == p], default=-1) for p in range(3)}
        partitions = Diagram("partitions", N_("Partitions, offsets and keys"),
                             N_("Where 14 keyed records landed in a live 3-partition topic: same key, same partition."),
                             partitions_svg("orders", records, ends))
        groups = _group_diagram(bootstrap)
        replication = _replication_diagram(cluster, producer)
        del producer
    return [partitions, replication, groups]


def _leos(cluster, topic: str) -> tuple[list[dict], dict]:
    states = [cluster.partition_state(topic, p) for p in range(3)]
    return states, {(s["partition"], b): leo for s in states for b, leo in s["log_end_offsets"].items()}


def _replication_diagram(cluster, producer) -> Diagram:
    before, leos_before = _leos(cluster, "orders")
    cluster.stop_broker(2)
    for i in range(6):
        producer.produce("orders", f"late order {i}".encode(), f"late-{i}".encode())
    producer.flush(15)
    after, leos_after = _leos(cluster, "orders")
    leos_after.update({k: v for k, v in leos_before.items() if k[1] == 2})  # what broker 2 had when it stopped
    svg = replication_svg("orders", [("all three brokers up", before, leos_before, set()),
                                     ("broker 2 stopped, 6 more records", after, leos_after, {2})])
    return Diagram("replication", N_("Leaders, followers and the ISR"),
                   N_("A live cluster before and after a broker stops: leadership moves to an in-sync "
                      "follower, the ISR shrinks, the stopped replica falls behind."), svg)


def _group_diagram(bootstrap: str, timeout: float = 20) -> Diagram:
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_course.client_logs import quiet

    admin = AdminClient(quiet({"bootstrap.servers": bootstrap}))
    admin.create_topics([NewTopic("clicks", 4, 3)])["clicks"].result(15)
    shape = {"dashboard": 2, "archive": 1}
    consumers = []
    for group, count in shape.items():
        for i in range(count):
            consumer = Consumer(quiet({"bootstrap.servers": bootstrap, "group.id": group,
                                       "client.id": f"{group}-{i + 1}"}))
            consumer.subscribe(["clicks"])
            consumers.append(consumer)
    deadline = time.monotonic() + timeout
    described = {}
    while time.monotonic() < deadline:
        for consumer in consumers:
            consumer.poll(0.05)
        described = {g: f.result(10) for g, f in admin.describe_consumer_groups(list(shape)).items()}
        if all(len(d.members) == shape[g] and sum(len(m.assignment.topic_partitions) for m in d.members) == 4
               for g, d in described.items()):
            break
    for consumer in consumers:
        consumer.close()
    owned = {g: {m.client_id: sorted(tp.partition for tp in m.assignment.topic_partitions)
                 for m in sorted(d.members, key=lambda m: m.client_id)} for g, d in described.items()}
    return Diagram("consumer-groups", N_("Consumer groups share partitions"),
                   N_("Two groups on a live 4-partition topic, as the group coordinator describes them."),
                   groups_svg("clicks", [0, 1, 2, 3], owned))


def all_diagrams(live: bool = True) -> list[Diagram]:
    return state_machines() + (live_diagrams() if live else [])


def write(diagrams: list[Diagram], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for diagram in diagrams:
        (out / f"{diagram.name}.svg").write_text(diagram.svg)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    out = Path(args[0] if args else "slides/build/diagrams")
    diagrams = all_diagrams(live="--no-live" not in args)
    write(diagrams, out)
    for diagram in diagrams:
        print(f"{out / diagram.name}.svg  {': '.join(diagram.said())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
