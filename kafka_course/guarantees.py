"""Crashes on purpose: the tools notebooks 07 and 08 and their labs use to test delivery guarantees.

A delivery guarantee is a statement about failures, so the only way to see one is to
fail on purpose, many times, and count. This module provides:

* ``CrashPlan``: decides, from a seed, at which steps a worker "dies". A crash is an
  exception (``Crash``) raised in the middle of the work; the code that runs the
  worker then drops its consumer without committing anything, as a killed process would.
* ``run_with_restarts``: runs a worker, restarts it after every crash, and stops when
  the worker says it is done or a time limit passes.
* ``tally``: counts what was lost and what was repeated.
* ``read_topic``: what a ``read_committed`` or ``read_uncommitted`` consumer gets.
* a consume-transform-produce worker (``ctp_worker``) that a notebook runs as a real
  operating-system process and kills (SIGKILL; ``Popen.kill()``). Run it by path
  (``python guarantees.py ctp BOOTSTRAP INPUT OUTPUT GROUP TXID``): this file imports
  nothing from the course package, so a restarted worker is up in a fraction of a second.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


class Crash(Exception):
    """The worker died here. Nothing after this point ran, nothing was committed."""


@dataclass
class CrashPlan:
    """Crash at ``crashes`` randomly chosen steps among the first ``steps`` ones.

    Call ``step()`` at each point where a real process could die; it raises ``Crash``
    when the step count reaches one of the chosen points. The same seed gives the same
    points, so an experiment can be repeated exactly.
    """
    crashes: int
    steps: int
    seed: int = 0
    taken: int = 0
    crashed: int = 0
    points: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        if self.crashes and self.steps > 1:
            self.points = sorted(rng.sample(range(1, self.steps), min(self.crashes, self.steps - 1)))

    def step(self) -> None:
        self.taken += 1
        if self.crashed < len(self.points) and self.taken >= self.points[self.crashed]:
            self.crashed += 1
            from .i18n import _  # here, not at the top: run as a script, this file imports nothing of the course
            raise Crash(_("crash {number} of {total}, at step {step}").format(
                number=self.crashed, total=len(self.points), step=self.taken))

    @property
    def finished(self) -> bool:
        """Every planned crash has happened."""
        return self.crashed >= len(self.points)


def run_with_restarts(worker: Callable[[], bool], *, time_limit: float = 30, max_runs: int = 100) -> dict[str, Any]:
    """Call ``worker()`` until it returns True (done), restarting it after each ``Crash``.

    The worker owns its clients and must drop them without committing when ``Crash``
    goes through it (a ``finally`` that closes the consumer with ``autocommit=False``).
    Returns how many runs there were, how many crashed, and how long it all took.
    """
    started, runs, crashes = time.monotonic(), 0, 0
    done = False
    while not done and runs < max_runs and time.monotonic() - started < time_limit:
        runs += 1
        try:
            done = bool(worker())
        except Crash:
            crashes += 1
    return {"runs": runs, "crashes": crashes, "seconds": round(time.monotonic() - started, 2), "done": done}


@dataclass(frozen=True)
class Tally:
    """What happened to each expected item: processed once, never, or more than once."""
    expected: int
    once: int
    lost: int
    duplicated: int  # extra executions: an item done three times counts 2

    def row(self) -> dict[str, int]:
        return {"expected": self.expected, "processed once": self.once, "lost": self.lost,
                "duplicates": self.duplicated}


def tally(expected: Iterable[Any], done: Iterable[Any]) -> Tally:
    """Compare the items that should have been processed with every execution seen."""
    want = set(expected)
    counts = Counter(done)
    lost = len(want - set(counts))
    extra = sum(n - 1 for item, n in counts.items() if item in want and n > 1)
    once = sum(1 for item in want if counts.get(item) == 1)
    return Tally(len(want), once, lost, extra)


@dataclass(frozen=True)
class Seen:
    """One record as a consumer of a given isolation level received it."""
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def read_topic(bootstrap: str, topic: str, isolation: str = "read_committed", timeout: float = 15) -> list[Seen]:
    """Every record a consumer with this ``isolation.level`` gets, from the start of each
    partition to its end (the last stable offset for ``read_committed``)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}",
                         "isolation.level": isolation, "enable.auto.commit": False,
                         "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    seen: list[Seen] = []
    finished: set[int | None] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(finished) < len(partitions) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                finished.add(message.partition())  # end of partition (or an error): stop reading it
                continue
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None  # a consumed record has both
            seen.append(Seen(partition, offset, message.key(), message.value()))
    finally:
        consumer.close()
    return sorted(seen, key=lambda s: (s.partition, s.offset))


# -- consume-transform-produce, in its own process ----------------------------------------
def transform(value: bytes) -> bytes:
    """The pipeline's business logic: an order in, the same order with its VAT out."""
    order = json.loads(value)
    order["vat_cents"] = round(order["amount_cents"] * 0.21)
    return json.dumps(order, sort_keys=True).encode()


def ctp_worker(bootstrap: str, source: str, sink: str, group: str, transactional_id: str,
               batch: int = 20, work_s: float = 0.15, idle_polls: int = 8) -> None:
    """Read ``source``, write ``transform(value)`` to ``sink``, exactly once.

    Each batch is one transaction: the output records *and* the input offsets
    (``send_offsets_to_transaction``) are committed together, or not at all. A static
    group member (``group.instance.id``) restarted after a crash takes its old place
    at once instead of waiting for the dead member's session to time out.
    """
    from confluent_kafka import Consumer, Producer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": transactional_id,
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 10_000})
    producer.init_transactions(30)  # fences any older producer with this id, aborts its open transaction
    consumer.subscribe([source])
    quiet = 0
    while quiet < idle_polls:  # bounded: stop after a stretch of empty polls
        records = [m for m in consumer.consume(batch, 0.25) if m.error() is None]
        if not records:
            quiet += 1
            continue
        quiet = 0
        producer.begin_transaction()
        for m in records:
            value = m.value()
            assert value is not None, "the pipeline's orders all have a value"
            producer.produce(sink, transform(value), m.key())
        time.sleep(work_s)  # pretend the work takes a while, so a kill often lands mid-transaction
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        print(f"committed {len(records)} records", flush=True)
    consumer.close()


def ctp_command(bootstrap: str, source: str, sink: str, group: str, transactional_id: str) -> list[str]:
    """The command line that starts ``ctp_worker`` as its own process."""
    return [sys.executable, __file__, "ctp", bootstrap, source, sink, group, transactional_id]


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "ctp":
        bootstrap, source, sink, group, transactional_id = sys.argv[2:]
        ctp_worker(bootstrap, source, sink, group, transactional_id)
    else:
        sys.exit(f"usage: {sys.argv[0]} ctp BOOTSTRAP SOURCE SINK GROUP TRANSACTIONAL_ID")
