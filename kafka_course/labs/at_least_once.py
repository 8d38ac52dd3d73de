"""Check for lab 07: a consumer that loses nothing across crashes, with idempotent side effects.

``prepare()`` fills a topic with payments and returns a ``Lab``. The learner writes

* ``setup(db)``: create the ``payments`` table (columns ``payment_id``, ``account``, ``amount``),
* ``worker(consumer, db)``: the poll loop that records each payment in the table and
  commits offsets, until ``lab.finished()`` says the group has committed everything.

``lab.run(worker, setup)`` runs the worker and crashes it again and again: the database
handed to the worker (``CrashingDatabase``) raises ``Crash`` on some writes, either just
before the write or just after it, as if the process had been killed at that instant.
The consumer is then dropped without committing, and a new one starts. ``check(lab)``
reads the table: every payment exactly once, balances right, offsets at the end.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..guarantees import Crash, CrashPlan
from ..i18n import _

if TYPE_CHECKING:
    from kafka import KafkaConsumer

_WRITES = ("insert", "update", "replace", "delete", "upsert")


class CrashingDatabase:
    """An SQLite database that survives the worker's crashes, and causes some of them.

    ``execute(sql, params)`` works like sqlite3's. Statements that write may raise
    ``Crash`` at the steps of the lab's ``CrashPlan``: half the time the write has
    happened when the crash comes, half the time it has not.
    """

    def __init__(self, plan: CrashPlan, seed: int):
        self.connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.plan, self._rng = plan, random.Random(seed)
        self.writes = 0

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        if not sql.lstrip().lower().startswith(_WRITES):
            return self.connection.execute(sql, params)
        self.writes += 1
        try:
            self.plan.step()
        except Crash:
            if self._rng.random() < 0.5:
                self.connection.execute(sql, params)  # the write landed; the process died right after
            raise
        return self.connection.execute(sql, params)

    def query(self, sql: str, params: Any = ()) -> list[tuple]:
        """Read rows (never crashes): ``db.query("SELECT COUNT(*) FROM payments")``."""
        return self.connection.execute(sql, params).fetchall()


@dataclass
class Lab:
    topic: str
    group: str
    bootstrap: str
    payments: dict[str, tuple[str, int]]  # payment id -> (account, amount)
    crashes: int
    time_limit: float
    seed: int = 7
    db: CrashingDatabase | None = None
    runs: int = 0
    crashed: int = 0
    started: float = field(default_factory=time.monotonic)

    def finished(self) -> bool:
        """True once the group has committed the end of every partition, or time is up."""
        if time.monotonic() - self.started > self.time_limit:
            return True
        from ..clients import lag
        return sum(lag(self.group, self.topic, bootstrap=self.bootstrap).values()) == 0

    def consumer(self, **settings: Any) -> KafkaConsumer:
        """A kafka-python consumer in the lab's group, subscribed to the payments topic."""
        from kafka import KafkaConsumer
        config = {"bootstrap_servers": self.bootstrap, "group_id": self.group, "auto_offset_reset": "earliest",
                  "enable_auto_commit": False, "max_poll_records": 25, "session_timeout_ms": 6000,
                  "heartbeat_interval_ms": 500, **settings}
        return KafkaConsumer(self.topic, **config)

    def run(self, worker: Callable[[Any, CrashingDatabase], Any], setup: Callable[[CrashingDatabase], Any],
            **consumer_settings: Any) -> None:
        """Run ``worker`` until it finishes, restarting it after every crash."""
        plan = CrashPlan(self.crashes, max(2, len(self.payments) * 3 // 4), seed=self.seed)
        self.db = CrashingDatabase(plan, self.seed)
        setup(self.db)
        self.started = time.monotonic()
        while self.runs < self.crashes + 20:
            self.runs += 1
            consumer = self.consumer(**consumer_settings)
            try:
                worker(consumer, self.db)
            except Crash:
                self.crashed += 1
                print("  " + _("crash {number} after {writes} writes: the consumer died, a new one starts").format(
                    number=self.crashed, writes=self.db.writes))
                continue
            finally:
                consumer.close(autocommit=False)  # a dead process commits nothing
            if self.finished():
                break
        print("  " + _("{runs} runs, {crashes} crashes, {seconds:.1f} s").format(
            runs=self.runs, crashes=self.crashed, seconds=time.monotonic() - self.started))


def prepare(*, bootstrap: str | None = None, payments: int = 300, accounts: int = 6, partitions: int = 3,
            crashes: int = 6, time_limit: float = 30) -> Lab:
    """A new topic of ``payments`` payments and a fresh group to consume it."""
    from ..connection import current_bootstrap
    from ..clients import new_topic, produce_demo
    servers = bootstrap or current_bootstrap()
    rng = random.Random(payments)
    table = {f"pay-{i:05d}": (f"account-{i % accounts}", rng.randint(1, 500)) for i in range(payments)}
    ids = list(table)
    topic = new_topic("lab07-payments", partitions=partitions, bootstrap=servers)
    produce_demo(topic, payments, bootstrap=servers, key=lambda i: table[ids[i]][0],
                 value=lambda i: {"payment_id": ids[i], "account": table[ids[i]][0], "amount": table[ids[i]][1]})
    return Lab(topic, f"lab07-{uuid.uuid4().hex[:6]}", servers, table, crashes, time_limit)


def check(lab: Lab) -> None:
    """Count what the crashed-and-restarted worker left in the table."""
    with Report(_("Lab 07 · at-least-once without duplicates")) as report:
        _crashes(report, lab)
        rows = _rows(report, lab)
        if rows is None:
            for what in _table_checks():
                report.not_run(what)
            return
        counts = Counter(str(r[0]) for r in rows)
        missing = sorted(set(lab.payments) - set(counts))
        twice = sorted(p for p, n in counts.items() if n > 1)
        report.check(not missing, _("all {count} payments are in the table").format(count=len(lab.payments)),
                     _("{count} payments never reached the table (e.g. {example}). They were committed before "
                       "they were recorded: commit the offsets only after the records are processed.").format(
                         count=len(missing), example=missing[0] if missing else ""))
        report.check(not twice, _("no payment is in the table twice"),
                     _("{count} payments are in the table more than once (e.g. {example}). At-least-once delivers "
                       "some records again after a crash; make record_payment idempotent, for example a PRIMARY "
                       "KEY on payment_id with INSERT OR IGNORE.").format(
                         count=len(twice), example=twice[0] if twice else ""))
        _balances(report, lab, rows)
        done = sum(_lag(lab).values()) == 0
        report.check(done, _("the group's committed offsets reach the end of every partition"),
                     _("the group has not committed the end of every partition: a restarted consumer would "
                       "process records again. Commit after each batch (or record) you finish."))


def _crashes(report: Report, lab: Lab) -> None:
    """The crashes happened, and each one ended the worker (none was caught inside it)."""
    raised = lab.db.plan.crashed if lab.db is not None else 0
    if not raised:
        report.check(False, "", _("the consumer never crashed; run lab.run(worker, setup) before the check."))
        return
    report.check(lab.crashed == raised, _("your consumer survived {crashes} crashes").format(crashes=lab.crashed),
                 _("your worker caught {caught} of the {raised} crashes that db.execute raised (an except around "
                   "the work?) and went on as if its process had survived. A crash stands for the process being "
                   "killed: let the exception end worker(), so that lab.run starts a new consumer from the "
                   "committed offsets.").format(caught=raised - lab.crashed, raised=raised))


def _table_checks() -> tuple[str, ...]:
    """The checks that read the table, named for the ones that cannot run without it."""
    return (_("every payment is in the table"), _("no payment is in the table twice"),
            _("every account's total matches its payments"), _("the group's committed offsets reach the end"))


def _rows(report: Report, lab: Lab) -> list[tuple] | None:
    """The table's rows, or None (with a failed check) when there is no table to read."""
    if lab.db is None:
        return None
    try:
        return lab.db.query("SELECT payment_id, account, amount FROM payments")
    except sqlite3.Error as e:
        report.check(False, "", _("the table payments cannot be read ({error}); setup(db) must create it "
                                  "with the columns payment_id, account and amount.").format(error=e))
        return None


def _lag(lab: Lab) -> dict[int, int]:
    from ..clients import lag
    return lag(lab.group, lab.topic, bootstrap=lab.bootstrap)


def _balances(report: Report, lab: Lab, rows: list[tuple]) -> None:
    want: Counter = Counter()
    for account, amount in lab.payments.values():
        want[account] += amount
    got: Counter = Counter()
    for _payment, account, amount in rows:
        got[str(account)] += int(amount)
    wrong = {a: (got.get(a, 0), want[a]) for a in want if got.get(a, 0) != want[a]}
    report.check(not wrong, _("every account's total matches its payments"),
                 _("some account totals are wrong, (yours, expected): {totals}").format(
                     totals=json.dumps(dict(sorted(wrong.items())))))
