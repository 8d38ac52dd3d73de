"""Check for lab 04: work through a backlog with a consumer group, exactly once.

``prepare()`` fills a topic with numbered orders and returns a ``Backlog``. The
learner's workers call ``backlog.handle(worker, record)`` for every order they
process; ``handle`` is thread-safe and remembers who handled what. One worker is
told to leave the group after a fixed number of orders (a scale-down), so the others
must take over its partitions without skipping or repeating an order. And one worker's
process is killed once, in the middle of a batch (``handle`` raises ``Crash`` just
before it would handle that worker's ``CRASH_BEFORE``-th order); ``process()``, which
runs each worker as a supervisor runs a process, starts it again. An order whose offset
was committed before it was handled is lost there, which no graceful leave shows.
``check()`` then counts: every order handled once, none twice, the leaver stopped at
its quota, and the group's committed offsets reach the end of every partition (so a
restart would not handle anything again).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..checks import Report
from ..guarantees import Crash
from ..i18n import _

WORK_S = 0.01  # what handling one order costs, at least
SERIAL_WORK_S = 15.0  # and what the whole backlog costs one worker, at least: on a slow or busy machine
# the last worker to join must still find orders left when the group gets to it (with 8 s, two
# workers emptied the backlog in 4 s, and a third that joined 4 s late handled nothing)
CRASHED, CRASH_BEFORE = "a", 5  # worker a's process dies as it is about to handle its 5th order: mid-batch


@dataclass
class Backlog:
    topic: str
    group: str
    orders: int
    partitions: int
    bootstrap: str
    time_limit: float
    work_s: float = WORK_S  # seconds one order takes to handle
    started: float = field(default_factory=time.monotonic)
    handled: list[tuple[str, int, int]] = field(default_factory=list)  # (worker, partition, offset)
    crashed: tuple[int, int] | None = None  # (partition, offset) of the order the killed worker never handled
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def handle(self, worker: str, record: Any) -> None:  # the learner's polled record: .partition, .offset
        """Process one order: it takes a little time (as real work does), then is written
        down with who handled it. The cost keeps one early worker from finishing the whole
        backlog before the others have joined the group. Once, worker a's process is killed
        here instead, before the order is handled (``Crash``)."""
        with self._lock:
            if worker == CRASHED and self.crashed is None and \
                    sum(1 for w, _, _ in self.handled if w == worker) == CRASH_BEFORE - 1:
                self.crashed = (record.partition, record.offset)
                raise Crash(_("worker {worker}'s process was killed before it handled partition {partition} offset "
                              "{offset}").format(worker=worker, partition=record.partition, offset=record.offset))
        time.sleep(self.work_s)
        with self._lock:
            self.handled.append((worker, record.partition, record.offset))

    def process(self, worker: Callable[..., Any], name: str, *args: Any) -> None:
        """Run ``worker(name, *args)`` as a supervisor runs a process: when the process is
        killed (``Crash``), a new one starts with the same arguments."""
        while True:
            try:
                worker(name, *args)
                return
            except Crash as crash:
                print(_("{crash}; a new process starts").format(crash=crash))

    def done(self) -> bool:
        """True once every order has been handled at least once."""
        with self._lock:
            return len({(p, o) for _, p, o in self.handled}) >= self.orders

    def time_left(self) -> float:
        """Seconds left of the lab's time budget (loops should stop at 0)."""
        return self.time_limit - (time.monotonic() - self.started)

    def by_worker(self) -> Counter:
        with self._lock:
            return Counter(worker for worker, _, _ in self.handled)


def prepare(*, bootstrap: str | None = None, partitions: int = 6, orders: int = 600,
            time_limit: float = 60) -> Backlog:
    """A new topic holding ``orders`` orders, and a fresh group name to process them with."""
    from ..connection import current_bootstrap
    from ..clients import new_topic, produce_demo
    servers = bootstrap or current_bootstrap()
    topic = new_topic("lab04-orders", partitions=partitions, bootstrap=servers)
    produce_demo(topic, orders, key=lambda i: f"customer-{i % 50}", value=lambda i: f"order {i}", bootstrap=servers)
    group = f"order-workers-{uuid.uuid4().hex[:6]}"
    return Backlog(topic, group, orders, partitions, servers, time_limit, max(WORK_S, SERIAL_WORK_S / orders))


def check(backlog: Backlog, *, leaver: str, quota: int) -> None:
    """Count what the workers did; raise ``CheckFailed`` with what is wrong."""
    from ..clients import committed, offsets
    counts = Counter((p, o) for _, p, o in backlog.handled)
    per_worker = backlog.by_worker()
    twice = sorted(k for k, n in counts.items() if n > 1)
    ends = {o.partition: o.high_watermark for o in offsets(backlog.topic, bootstrap=backlog.bootstrap)}
    every = {(p, o) for p, end in ends.items() for o in range(end)}
    missing = sorted(every - set(counts))
    with Report(_("Lab 04 · scaling a consumer group")) as report:
        report.check(not missing, _("all {orders} orders were handled").format(orders=backlog.orders),
                     _never_handled(backlog, missing, leaver) if missing else "")
        report.check(not twice, _("no order was handled twice"),
                     _("{count} orders were handled twice (e.g. partition {partition} offset {offset}). When a "
                       "partition moves to another worker, it starts at the group's committed offset: commit each "
                       "order's offset + 1 as soon as it is handled.").format(
                         count=len(twice), partition=twice[0][0], offset=twice[0][1]) if twice else "")
        short = per_worker.get(leaver, 0) < quota and not missing
        report.check(per_worker.get(leaver, 0) == quota,
                     _("worker {leaver} handled exactly its quota of {quota} orders, then left").format(
                         leaver=leaver, quota=quota),
                     _("worker {leaver} should handle exactly {quota} orders and then leave the group, but it "
                       "handled {handled}.").format(leaver=leaver, quota=quota, handled=per_worker.get(leaver, 0))
                     + (" " + _("The others handled the whole backlog first: if {leaver} joined the group late (a "
                                "busy machine), run the workers again.").format(leaver=leaver) if short else ""))
        others = {w: n for w, n in per_worker.items() if w != leaver and n}
        report.check(len(others) >= 2, _("the other workers shared the rest: {shares}").format(
                         shares=dict(sorted(others.items()))),
                     _("the rest of the work should be shared by the remaining workers; got {shares}.").format(
                         shares=dict(per_worker)))
        done = committed(backlog.group, backlog.topic, bootstrap=backlog.bootstrap)
        behind = {p: (done.get(p), end) for p, end in ends.items() if done.get(p) != end}
        report.check(not behind, _("the group's committed offsets reach the end of every partition"),
                     _("the group's committed offsets should equal each partition's end, so that a restarted worker "
                       "finds nothing left to do; (committed, end) per partition: {behind}").format(behind=behind))


def _never_handled(backlog: Backlog, missing: list[tuple[int, int]], leaver: str) -> str:
    """Why orders were skipped: committed before the crash let them be handled, committed past what
    the leaver polled but did not handle, or never given to backlog.handle at all."""
    head = _("{count} of {orders} orders were never handled (e.g. partition {partition} offset {offset}).").format(
        count=len(missing), orders=backlog.orders, partition=missing[0][0], offset=missing[0][1])
    causes = []
    if backlog.crashed in missing:
        partition, offset = backlog.crashed
        causes.append(_("Partition {partition} offset {offset} is the order worker {worker} was about to handle when "
                        "its process was killed: its offset was already committed, so whoever took the partition over "
                        "started after it. A worker that commits before handling loses the orders a crash interrupts: "
                        "commit each order's offset + 1 after backlog.handle returns.").format(
                            partition=partition, offset=offset, worker=CRASHED))
    last: dict[int, int] = {}
    for worker, partition, offset in backlog.handled:
        if worker == leaver:
            last[partition] = max(offset, last.get(partition, -1))
    after_leaver = [(p, o) for p, o in missing if last.get(p, -2) + 1 == o]
    if after_leaver:
        causes.append(_("Partition {partition} offset {offset} comes right after the last order worker {leaver} "
                        "handled before it left: the group's offset had moved past orders {leaver} polled but never "
                        "handled. A worker that commits what poll() returned commits before handling: "
                        "consumer.commit() without offsets does that, and so does enable_auto_commit=True "
                        "(kafka-python's default), on its own schedule and when the consumer closes. Turn "
                        "auto-commit off and commit each order's offset + 1 yourself, after backlog.handle "
                        "returns.").format(
                            partition=after_leaver[0][0], offset=after_leaver[0][1], leaver=leaver))
    if not causes:
        causes.append(_("Does every worker call backlog.handle(name, record) for each record it polls?"))
    return " ".join([head, *causes])
