"""Check for lab 05: survive broker failures without losing an acknowledged record or stopping writes.

The learner chooses the topic's settings (partitions, replication factor, topic
configs) and the producer's settings (librdkafka names). ``check()`` creates the topic,
produces numbered records in a background thread with those settings, and meanwhile
breaks the three-broker cluster (``failure_script``): lost acknowledgements, a crashed
leader whose followers were behind, one broker stopped for maintenance, then two, then
the in-sync replicas while an out-of-sync one comes back alone.

It judges behaviour only, the way the learning goal is stated:

* every acknowledged record is stored, and stored once (no loss, no duplicate);
* while one broker is stopped, writes go on: every record sent meanwhile is
  acknowledged before the broker returns (availability);
* while a leader is the only in-sync replica left, it accepts no acks=all write
  (a record on one disk is not safe): none of the records sent meanwhile is
  acknowledged until the other brokers are back.

``min.insync.replicas=1`` fails the last, 3 fails the one before, one replica fails
both, ``acks=1`` loses records, ``unclean.leader.election.enable=true`` loses the records
the out-of-sync replica never copied, and a producer without idempotence stores retried
batches twice. The sentences use the settings only to point at the likely cause.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..checks import Report
from ..i18n import _
from .failure_script import FailureScript, Window

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Producer

    from ..handle import PartitionState


def judged() -> tuple[str, ...]:
    """What the check judges, named for the checks that cannot run."""
    return (_("records are acknowledged"), _("every acknowledged record survived"),
            _("no acknowledged record is stored twice"), _("writes go on while one broker is stopped"),
            _("a lone leader refuses acks=all writes"))


@dataclass
class Trial:
    """What the producer saw while the brokers were failing."""
    topic: str
    acked: dict[int, list[bytes]] = field(default_factory=dict)  # partition -> values, in acknowledgement order
    acked_at: dict[int, float] = field(default_factory=dict)  # record number -> when it was acknowledged
    failed: set[int] = field(default_factory=set)  # record numbers the producer gave up on
    sent_at: list[float] = field(default_factory=list)  # record number -> when it was handed to the producer
    errors: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    # reentrant: a producer that meets a fatal error may hand reports back from inside one
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def sent(self) -> int:
        return len(self.sent_at)

    # msg: a confluent Message, Any because its stubs allow no partition and no value, and every record
    # this lab sends has both
    def delivered(self, err: KafkaError | None, msg: Any) -> None:
        with self._lock:
            if err is None:
                self.acked.setdefault(msg.partition(), []).append(msg.value())
                self.acked_at[int(msg.value()[7:])] = time.monotonic()
            else:
                self.errors[err.name()] += 1
                self.failed.add(int(msg.value()[7:]))

    def sent_during(self, window: Window) -> list[int]:
        return [n for n, at in enumerate(self.sent_at) if window.start <= at <= window.end]

    def pending(self, window: Window) -> int:
        """Writes sent during ``window`` that are neither acknowledged nor failed yet."""
        with self._lock:
            return sum(1 for n in self.sent_during(window) if n not in self.acked_at and n not in self.failed)

    def now(self) -> float:
        return time.monotonic() - self.started


class _Writer:
    """Produces numbered records as fast as the producer accepts them, until stopped."""

    def __init__(self, producer: Producer, trial: Trial) -> None:
        self.producer, self.trial = producer, trial
        self._stop = threading.Event()
        self.fatal = False  # the producer stopped on a fatal error: nothing more to flush
        self._thread = threading.Thread(target=self._run, name="lab05-writer", daemon=True)

    def _run(self) -> None:
        from confluent_kafka import KafkaException
        while not self._stop.is_set():
            n = self.trial.sent
            try:
                self.producer.produce(self.trial.topic, b"record-%07d" % n, str(n % 97).encode(),
                                      on_delivery=self.trial.delivered)
                self.trial.sent_at.append(time.monotonic())
            except BufferError:
                pass  # the local queue is full (a partition has no leader): wait a little
            except KafkaException as e:  # a fatal error (e.g. an idempotent producer whose records the
                self.trial.errors[e.args[0].name()] += 1  # cluster lost): this producer takes no more writes
                self.fatal = True
                return
            self.producer.poll(0.002)

    def __enter__(self) -> _Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        if self.fatal:  # a fatal producer hands back no more reports (flush would fail inside them)
            return
        from confluent_kafka import KafkaException
        try:
            self.producer.flush(30)
        except (KafkaException, SystemError):  # the fatal error came during the flush: its reports are lost
            self.trial.errors["_FATAL"] += 1


def check(topic_settings: dict[str, Any], producer_settings: dict[str, Any], *,
          bootstrap: str | None = None, seconds: float = 1.5) -> Trial | None:
    """Break the cluster while your producer writes to your topic; raise ``CheckFailed`` if an
    acknowledged record is lost or stored twice, writes stop while one broker is down, or a
    lone leader accepts acks=all writes."""
    from confluent_kafka import KafkaException, Producer

    from ..client_logs import quiet
    from ..clients import new_topic
    from ..connection import current_bootstrap
    from ..handle import cluster
    servers = bootstrap or current_bootstrap()
    if not cluster(servers).can_control_brokers:  # a company or cloud cluster: nothing here may stop it
        print(_("Lab 05 · surviving a broker failure") + "\n  " + _(
            "This check stops brokers, and the brokers of {servers} cannot be stopped from here, so it is skipped. "
            "Unset KAFKA_BOOTSTRAP_SERVERS to run it on the embedded minikafka, or use the course's docker compose "
            "cluster.").format(servers=servers))
        return None
    with Report(_("Lab 05 · surviving a broker failure")) as report:
        ok, topic = report.attempt(_create, new_topic, topic_settings, servers, what=_("Creating your topic"))
        if not ok:
            _not_run(report, _("the topic could not be created"))
            return None
        settings = {"bootstrap.servers": servers, "partitioner": "murmur2_random", "linger.ms": 5,
                    "message.timeout.ms": 60_000, **producer_settings}
        try:
            producer = Producer(quiet(settings))
        except KafkaException as e:
            report.check(False, "", _("These producer settings are refused by the client: {error}").format(
                error=e.args[0].str()))
            _not_run(report, _("the producer could not be created"))
            return None
        trial = Trial(topic)
        script = FailureScript(cluster(servers), topic, seconds, lambda text: print(f"  {trial.now():5.1f}s  {text}"),
                               pending=trial.pending)
        with _Writer(producer, trial):
            windows = script.run()
        applied = _topic_settings(servers, topic)
        unclean_allowed = applied.get("unclean.leader.election.enable") == "true"
        _judge(report, trial, servers, windows.get("out of sync"), unclean_allowed)
        _judge_windows(report, trial, windows, producer_settings,
                       applied.get("min.insync.replicas", "?"))
        _forget(topic, servers)
        return trial


def _create(new_topic: Callable[..., str], settings: dict[str, Any], servers: str) -> str:
    return new_topic("lab05-orders", partitions=int(settings.get("partitions", 3)),
                     replication_factor=int(settings.get("replication_factor", -1)),
                     config=settings.get("config") or {}, bootstrap=servers)


def _not_run(report: Report, why: str) -> None:
    for what in judged():
        report.not_run(what, why)


def _forget(topic: str, servers: str) -> None:
    """Delete the check's topic: every run makes a new one, and the brokers need not keep them."""
    from ..clients import delete_topic
    with contextlib.suppress(Exception):  # a topic left behind does no harm
        delete_topic(topic, bootstrap=servers)


def _topic_settings(servers: str, topic: str) -> dict[str, str]:
    """The topic's settings as the cluster applies them (its own, or the broker defaults); empty
    when they cannot be read (they only choose the words of a sentence)."""
    from confluent_kafka.admin import ConfigResource
    from ..clients import admin
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    try:
        entries = admin(servers).describe_configs([resource])[resource].result(10)
    except Exception:  # noqa: BLE001 - only a hint in a sentence
        return {}
    return {name: entry.value for name, entry in entries.items()}


def _judge(report: Report, trial: Trial, servers: str, out_of_sync: Window | None = None,
           unclean_allowed: bool = False) -> None:
    from ..guarantees import read_topic
    stored = read_topic(servers, trial.topic, "read_uncommitted", timeout=30)
    by_partition: dict[int, Counter] = {}
    for s in stored:
        by_partition.setdefault(s.partition, Counter())[s.value] += 1
    acked = sum(len(v) for v in trial.acked.values())
    lost = [v for p, values in trial.acked.items() for v in values if by_partition.get(p, Counter())[v] == 0]
    twice = sorted({v for p, values in trial.acked.items() for v in values if by_partition.get(p, Counter())[v] > 1})
    print("  " + _("{sent} records sent, {acked} acknowledged, {stored} stored; errors reported to the producer: "
                   "{errors}").format(sent=trial.sent, acked=acked, stored=len(stored),
                                       errors=dict(trial.errors) or _("none")))
    report.check(acked > 0, _("{acked} records were acknowledged").format(acked=acked),
                 _("no record was acknowledged at all; is the producer able to write to the topic?"))
    unclean = _unclean_leader(out_of_sync) if unclean_allowed else None
    if unclean is not None:
        gone = _("{count} acknowledged records are gone (e.g. {example}). While brokers {down}, the in-sync replicas, "
                 "were stopped, broker {leader}, whose copy was behind, became the leader of partition {partition}: "
                 "an unclean leader election. The records it never copied were cut from the other copies when they "
                 "came back. Leave unclean.leader.election.enable false: a partition with no in-sync replica should "
                 "wait for one rather than lose acknowledged records.")
    else:
        gone = _("{count} acknowledged records are gone (e.g. {example}). A record acknowledged by the leader alone "
                 "dies with the leader: wait for all in-sync replicas (acks), and keep more than one copy of each "
                 "partition.")
    said = {"down": out_of_sync.down if out_of_sync else [], "leader": unclean.leader if unclean else -1,
            "partition": unclean.partition if unclean else -1}
    report.check(not lost, _("every acknowledged record survived the failures"),
                 gone.format(count=len(lost), example=lost[0].decode() if lost else "", **said))
    report.check(not twice, _("no acknowledged record is stored twice"),
                 _("{count} records are stored more than once (e.g. {example}). Lost acknowledgements made the "
                   "producer retry batches the broker already had: an idempotent producer lets the broker "
                   "recognise them.").format(count=len(twice), example=twice[0].decode() if twice else ""))


def _unclean_leader(window: Window | None) -> PartitionState | None:
    """A partition led, while its in-sync replicas were all stopped, by a replica that was out of sync.

    Only asked when the topic allows unclean elections: otherwise a replica that left the ISR
    while it was below min.insync.replicas may lead as an eligible leader replica (KIP-966),
    a clean election, and what it lacks was acknowledged by the leader alone (acks)."""
    if window is None:
        return None
    return next((p for p in window.partitions if p.leader >= 0 and p.leader not in window.down), None)


def _judge_windows(report: Report, trial: Trial, windows: dict[str, Window], producer_settings: dict,
                   min_insync: str) -> None:
    maintenance, lone = windows["maintenance"], windows["lone leader"]
    sent = trial.sent_during(maintenance)
    late = [n for n in sent if trial.acked_at.get(n, float("inf")) > maintenance.restarted]
    if not sent:
        report.check(False, "", _("while broker {broker} was stopped, the producer could not even take new writes: "
                                  "its queue was full of writes that were never acknowledged. {why}").format(
                                      broker=maintenance.down[0], why=_why_unavailable(maintenance, min_insync)))
    else:
        report.check(not late,
                     _("while broker {broker} was stopped, all {sent} writes sent meanwhile were acknowledged").format(
                         broker=maintenance.down[0], sent=len(sent)),
                     _("while broker {broker} was stopped for maintenance, {late} of the {sent} writes sent meanwhile "
                       "were not acknowledged before it came back: one stopped broker stopped writes. {why}").format(
                         broker=maintenance.down[0], late=len(late), sent=len(sent),
                         why=_why_unavailable(maintenance, min_insync)))
    sent = trial.sent_during(lone)
    alone = [n for n in sent if trial.acked_at.get(n, float("inf")) <= lone.restarted]
    cause = _why_accepted(lone, producer_settings, min_insync)
    report.check(sent and not alone,
                 _("with brokers {down} stopped, the lone leader accepted none of the {sent} writes (they waited "
                   "until a second replica was back)").format(down=lone.down, sent=len(sent)),
                 _("with brokers {down} stopped, the leader was the only in-sync replica, and it acknowledged "
                   "{alone} of the {sent} writes sent meanwhile. Those records were on one disk only: one more "
                   "failure loses records the producer was told are safe. An acks=all write should be refused "
                   "(NOT_ENOUGH_REPLICAS) until a second replica is in sync. {cause}").format(
                     down=lone.down, alone=len(alone), sent=len(sent), cause=cause))


def _why_accepted(window: Window, producer_settings: dict, min_insync: str) -> str:
    """The likely reason a lone leader acknowledged writes: one copy, acks, or min.insync.replicas."""
    acks = str(producer_settings.get("acks", producer_settings.get("request.required.acks", "all")))
    if any(len(p.replicas) < 2 for p in window.partitions):
        return _("Each partition has a single copy: every write it accepts is on one disk only.")
    if acks not in ("all", "-1"):
        return _("Your producer uses acks={acks}: it does not wait for the in-sync replicas.").format(acks=acks)
    return _("The topic's min.insync.replicas is {min_insync}: the leader alone counts as enough.").format(
        min_insync=min_insync)


def _why_unavailable(window: Window, min_insync: str) -> str:
    """Name what the partitions looked like while the writes were waiting."""
    leaderless = [p for p in window.partitions if p.leader < 0]
    if leaderless:
        p = leaderless[0]
        if len(p.replicas) == 1:
            said = _("Partition {partition} had no leader: its only copy (on broker {brokers}) stopped with the "
                     "broker. Keep more copies of each partition.")
        else:
            said = _("Partition {partition} had no leader: all {copies} of its copies (on broker {brokers}) stopped "
                     "with the broker. Keep more copies of each partition.")
        return said.format(partition=p.partition, copies=len(p.replicas), brokers=", ".join(map(str, p.replicas)))
    smallest = min(window.partitions, key=lambda p: len(p.isr), default=None)
    if smallest is None or not min_insync.isdigit() or len(smallest.isr) >= int(min_insync):
        return _("Every partition had a leader and enough in-sync replicas: look at the errors the producer "
                 "reported.")
    return _("Partition {partition} had {in_sync} of its {replicas} replicas in sync, and the topic asks for "
             "{min_insync} in-sync replicas before an acks=all write counts, so its leader refused every write "
             "(NOT_ENOUGH_REPLICAS) while a broker was down.").format(
                 partition=smallest.partition, in_sync=len(smallest.isr), replicas=len(smallest.replicas),
                 min_insync=min_insync)
