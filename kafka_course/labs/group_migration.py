"""Check for lab 10: from the PHP-style low-level consumer to a consumer group.

Notebook 10's consumer reads partition 0 by hand (``assign``), remembers nothing and
never shares work. The learner migrates it to a group consumer (``subscribe``, a
``group.id``, commits) and hands in ``SETTINGS`` (confluent-kafka consumer settings)
and ``worker(consumer, process)``, the poll loop: it calls ``process(message)`` for
every record and runs while ``lab.running()``.

``lab.run(worker, SETTINGS)`` runs it as the sign-up service would run in production:

* member A starts alone; when a quarter of the sign-ups are processed, member B starts
  with the same code and settings (a second instance, scaled out), so the group
  rebalances in the middle of the run;
* ``process`` crashes now and then, before the sign-up is handled, as a process killed
  at that moment would. The crashed member's consumer is closed and a new one starts;
  what the group committed is all a newcomer knows. ``close()`` stands for the crash
  because a killed consumer with ``enable.auto.commit`` may already have committed
  everything ``poll()`` returned: closing makes that worst case happen every time.

The run ends when every sign-up is processed and committed, when nothing has been
processed for a while (a wrong solution), or at the time limit. While the coordinator
reports the group rebalancing, no member holds partitions, so that time is not counted
as idle: on Kafka an emptied group waits ``group.initial.rebalance.delay.ms`` (3 s) before
each first join, at the start and after every crash of a lone member.

``check(lab)`` then asks the cluster and the record of what was processed: every
partition read, no sign-up lost (at-least-once: repeats are allowed), the second member
given its share by the group coordinator, and the group's committed offsets at the end.
"""

from __future__ import annotations

import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..guarantees import Crash, CrashPlan
from ..i18n import _

if TYPE_CHECKING:
    from confluent_kafka import Message

WORK_SECONDS = 0.020  # what handling one sign-up costs; it keeps the run long enough for B to join
# and take a share (with 0.010, A finished the last 150 sign-ups before B had any on a busy CI machine)
IDLE_SECONDS = 3.0  # nothing processed and nothing left to commit for this long: the run is over
B_AFTER_IDLE_SECONDS = 1.5  # B also starts when A has processed nothing for this long
# A group that rebalances hands out no partitions, so no one can process anything: the
# idle clock stops while the coordinator reports one of these states. A new or emptied
# group stays in PreparingRebalance for group.initial.rebalance.delay.ms (3 s on Kafka,
# 0 on the course's embedded broker), longer when another member joins meanwhile.
REBALANCING = ("PREPARING_REBALANCING", "COMPLETING_REBALANCING")
# Under the learner's settings: a member notices a rebalance at its next heartbeat, and
# librdkafka's default of 3 s would make every rebalance of this short run last seconds.
LAB_DEFAULTS = {"heartbeat.interval.ms": 500}


@dataclass
class Member:
    name: str
    processed: Counter = field(default_factory=Counter)  # (partition, offset) -> times processed
    runs: int = 0
    crashes: int = 0
    error: str | None = None
    thread: threading.Thread | None = None


@dataclass
class Lab:
    topic: str
    bootstrap: str
    records: dict[tuple[int, int], bytes | None]  # (partition, offset) -> value, what the topic holds
    partitions: int
    crashes: int
    time_limit: float
    group: str = ""  # a fresh group id for this run, to use in SETTINGS
    seed: int = 10
    run_group: str | None = None  # the group.id the last run used
    members: list[Member] = field(default_factory=list)
    largest_group: int = 0  # the most members the coordinator reported at once, each with partitions
    rebalancing_seconds: float = 0.0  # how long the coordinator reported the group rebalancing
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _plan: CrashPlan | None = None
    _last_progress: float = 0.0
    _last_watch: float = 0.0  # when the coordinator last described the group

    def running(self) -> bool:
        """True while the worker should go on polling."""
        return not self._stop.is_set()

    def run(self, worker: Callable[[Any, Callable[[Any], None]], Any], settings: Mapping[str, Any]) -> None:
        """Run ``worker`` as member A, then also as member B, until the work is done or time is up."""
        self.members, self.largest_group, self.rebalancing_seconds = [], 0, 0.0
        self._stop.clear()
        self.run_group = (settings or {}).get("group.id") or None
        if self.run_group is None:
            print("  " + _("SETTINGS has no group.id: no consumer was started"))
            return
        self._plan = CrashPlan(self.crashes, max(2, len(self.records) * 3 // 4), seed=self.seed)
        started = self._last_progress = self._last_watch = time.monotonic()
        self._start_member("A", worker, settings)
        self._watch_until(lambda: (self._processed() >= len(self.records) // 4
                                   or self._idle(B_AFTER_IDLE_SECONDS)), started + self.time_limit / 2)
        self._start_member("B", worker, settings)
        self._watch_until(self._done, started + self.time_limit)
        self._stop.set()
        for member in self.members:
            if member.thread is not None:  # _start_member gave every member its thread
                member.thread.join(15)
        print("  " + _("{seconds:.1f} s, {rebalancing:.1f} s of them rebalancing; {members}").format(
            seconds=time.monotonic() - started, rebalancing=self.rebalancing_seconds,
            members="; ".join(_("member {name}: {processed} sign-ups processed, {runs} runs, {crashes} crashes").format(
                name=m.name, processed=sum(m.processed.values()), runs=m.runs, crashes=m.crashes)
                for m in self.members)))

    # -- the members ----------------------------------------------------------------------------
    def _start_member(self, name: str, worker: Callable[[Any, Callable[[Any], None]], Any],
                      settings: Mapping[str, Any]) -> None:
        member = Member(name)
        member.thread = threading.Thread(target=self._member_loop, args=(member, worker, dict(settings)),
                                         name=f"lab10-member-{name}", daemon=True)
        self.members.append(member)
        member.thread.start()

    def _member_loop(self, member: Member, worker: Callable[[Any, Callable[[Any], None]], Any],
                     settings: dict) -> None:
        from confluent_kafka import Consumer

        from ..client_logs import quiet
        while self.running() and member.runs < self.crashes + 20:
            member.runs += 1
            try:
                consumer = Consumer(quiet({**LAB_DEFAULTS, **settings, "bootstrap.servers": self.bootstrap}))
            except Exception as e:  # noqa: BLE001 - settings librdkafka refuses: a finding
                member.error = _("librdkafka refused SETTINGS ({error})").format(error=e)
                return
            self._progress()  # a new consumer needs a moment to reach the coordinator and join
            try:
                worker(consumer, lambda message: self._process(member, message))
                return
            except Crash:
                member.crashes += 1
            except Exception as e:  # noqa: BLE001 - the learner's worker failed: a finding, not a crash of the check
                where = traceback.extract_tb(e.__traceback__)[-1]
                member.error = _("its worker raised {error}: {message} (line {line} of {function})").format(
                    error=type(e).__name__, message=e, line=where.lineno, function=where.name)
                return
            finally:
                consumer.close()

    def _process(self, member: Member, message: Message | None) -> None:
        """The sign-up service's work for one record; it may crash before the work is done."""
        if message is None or message.error() is not None:
            return
        with self._lock:
            assert self._plan is not None  # run() makes the plan before it starts a member
            self._plan.step()
            member.processed[(message.partition(), message.offset())] += 1
            self._last_progress = time.monotonic()
        time.sleep(WORK_SECONDS)

    def _progress(self) -> None:
        with self._lock:
            self._last_progress = max(self._last_progress, time.monotonic())

    # -- watching the run --------------------------------------------------------------------------
    def _processed(self) -> int:
        with self._lock:
            return len({key for m in self.members for key in m.processed})

    def _watch_until(self, condition: Callable[[], bool], deadline: float) -> None:
        """Sample the group (``_watch_group``) until ``condition`` holds or ``deadline`` passes."""
        while time.monotonic() < deadline:
            self._watch_group()
            if condition():
                return
            time.sleep(0.1)

    def _idle(self, seconds: float) -> bool:
        with self._lock:
            return time.monotonic() - self._last_progress > seconds

    def _done(self) -> bool:
        if all(m.thread and not m.thread.is_alive() for m in self.members):
            return True
        if not self._idle(IDLE_SECONDS):
            return self._processed() >= len(self.records) and sum(self.lag().values()) == 0
        return True  # nobody processed anything for a while: what is left will not be read

    def _watch_group(self) -> None:
        """Ask the group coordinator (DescribeGroups) whether the group is rebalancing, and
        count the members it reports with partitions."""
        from ..clients import admin
        group = self.run_group
        if group is None:  # no run yet: nothing to describe (describing None failed, and was ignored, the same)
            return
        try:
            answer = admin(self.bootstrap).describe_consumer_groups([group])[group]
            described = answer.result(5)
        except Exception:  # noqa: BLE001 - a group between states can fail to describe; look again later
            return
        previous, self._last_watch = self._last_watch, time.monotonic()
        if getattr(described.state, "name", "") in REBALANCING:
            self.rebalancing_seconds += self._last_watch - previous  # since the previous answer, roughly
            self._progress()
        sharing = sum(1 for m in described.members if m.assignment.topic_partitions)
        self.largest_group = max(self.largest_group, sharing)

    def lag(self) -> dict[int, int]:
        from ..clients import lag
        return lag(self.run_group, self.topic, bootstrap=self.bootstrap) if self.run_group else {}


def prepare(*, bootstrap: str | None = None, signups: int = 300, partitions: int = 3, crashes: int = 3,
            time_limit: float = 40) -> Lab:
    """A new sign-ups topic of ``partitions`` partitions holding ``signups`` sign-ups from notebook 09's generator."""
    from ..clients import new_topic, produce_demo
    from ..connection import current_bootstrap
    from ..fakeusers import FakeUsers, key_of, serialize
    servers = bootstrap or current_bootstrap()
    events = FakeUsers(seed=10).take(signups)
    topic = new_topic("lab10-signups", partitions=partitions, bootstrap=servers)
    stored = produce_demo(topic, signups, bootstrap=servers, key=lambda i: key_of(events[i]),
                          value=lambda i: serialize(events[i]))
    return Lab(topic, servers, {(m.partition, m.offset): m.value for m in stored}, partitions, crashes, time_limit,
               group=f"signup-printer-{uuid.uuid4().hex[:6]}")


# -- the check -------------------------------------------------------------------------------------
def check(lab: Lab, settings: Mapping[str, Any]) -> None:
    """What the run left behind, judged as the sign-up service's owner would."""
    with Report(_("Lab 10 · from partition 0 to a consumer group")) as report:
        group = (settings or {}).get("group.id")
        if not report.check(bool(group), _("SETTINGS names a group: {group!r}").format(group=group),
                            _("SETTINGS has no group.id. Without a group the coordinator assigns no partitions and "
                              "keeps no offsets: that is the low-level consumer you are migrating from.")):
            return
        if not report.check(bool(lab.members) and lab.run_group == group, _("the run happened with these settings"),
                            _("run lab.run(worker, SETTINGS) with these SETTINGS before the check.")):
            return
        read = _check_partitions(report, lab)
        _check_nothing_lost(report, lab, settings, read)
        _check_second_member(report, lab)
        _check_committed(report, lab)
        for member in lab.members:
            report.check(member.error is None,
                         _("member {name} ran until it was told to stop").format(name=member.name),
                         _("member {name} stopped: {error}.").format(name=member.name, error=member.error))


def _processed(lab: Lab) -> Counter:
    total: Counter = Counter()
    for member in lab.members:
        total.update(member.processed)
    return total


def _check_partitions(report: Report, lab: Lab) -> set[int]:
    read = {p for p, _ in _processed(lab)}
    unread = sorted(set(range(lab.partitions)) - read)
    stored = Counter(p for p, _ in lab.records)
    if not read:
        expected = _("no sign-up was processed at all. Where does a group that has never committed start reading: "
                     "at the beginning of each partition, or at its end?")
    else:
        expected = _("partition(s) {partitions} were never read: {unread} of {total} sign-ups. The consumer reads "
                     "the partitions it is assigned; in a group, subscribing lets the coordinator hand every "
                     "partition to some member.").format(partitions=", ".join(map(str, unread)),
                                                         unread=sum(stored[p] for p in unread),
                                                         total=len(lab.records))
    report.check(not unread, _("every one of the {count} partitions was read").format(count=lab.partitions),
                 expected)
    return read


def _check_nothing_lost(report: Report, lab: Lab, settings: Mapping[str, Any], read: set[int]) -> None:
    processed = _processed(lab)
    committed = _committed(lab)
    lost = sorted(k for k in lab.records if k[0] in read and k not in processed and k[1] < (committed.get(k[0]) or 0))
    crashes = sum(m.crashes for m in lab.members)
    repeated = sum(1 for n in processed.values() if n > 1)
    if str(settings.get("enable.auto.commit", True)).lower() in ("true", "1"):
        why = _("enable.auto.commit is on, so the consumer commits the offsets of what poll() returned, processed "
                "or not; a crash then skips the records in hand.")
    else:
        why = _("their offsets were committed before they were processed. Commit only what process() has finished.")
    expected = _("{count} sign-ups were never processed although the group committed past them (e.g. partition "
                 "{partition}, offset {offset}): {why}").format(count=len(lost), partition=lost[0][0],
                                                                offset=lost[0][1], why=why) if lost else ""
    report.check(not lost, _("no sign-up was lost across {crashes} crashes ({repeated} processed more than once, "
                             "which at-least-once allows)").format(crashes=crashes, repeated=repeated),
                 expected)


def _check_second_member(report: Report, lab: Lab) -> None:
    shares = ", ".join(_("{name} processed {count}").format(name=m.name, count=sum(m.processed.values()))
                       for m in lab.members)
    if lab.largest_group == 0:
        expected = _("the coordinator never counted your consumers as members of {group!r} with partitions: assign() "
                     "picks partitions by hand, outside the group, so a second instance cannot take a share. Let the "
                     "group assign them.").format(group=lab.run_group)
    else:
        expected = _("when member B started, the group never had two members with partitions at the same time, so B "
                     "did not take a share ({shares}).").format(shares=shares)
    report.check(lab.largest_group >= 2,
                 _("when member B joined, the coordinator shared the partitions ({shares})").format(shares=shares),
                 expected)


def _check_committed(report: Report, lab: Lab) -> None:
    committed = _committed(lab)
    behind = {p: n for p, n in lab.lag().items() if n}
    if all(offset is None for offset in committed.values()):
        expected = _("the group has committed nothing, so a restarted consumer cannot know where to continue. "
                     "Commit the offsets of what you processed.")
    else:
        expected = _("the group's committed offsets stop short of the end ({count} sign-ups on partition(s) "
                     "{partitions}): a restart would process them again.").format(
                         count=sum(behind.values()), partitions=", ".join(map(str, sorted(behind))))
    report.check(not behind, _("the group's committed offsets reach the end of every partition"), expected)


def _committed(lab: Lab) -> dict[int, int | None]:
    from ..clients import committed
    return committed(lab.run_group, lab.topic, bootstrap=lab.bootstrap) if lab.run_group else {}
