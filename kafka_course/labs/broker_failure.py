"""Check for lab 05: survive a broker failure without losing an acknowledged record.

The learner chooses the topic's settings (partitions, replication factor, topic
configs) and the producer's settings (librdkafka names). ``check()`` creates the topic,
produces numbered records in a background thread with those settings, and meanwhile
breaks the three-broker cluster:

1. (minikafka) a few produce acknowledgements are lost, so the producer retries;
2. (minikafka) the followers fall behind, then the broker leading partition 0 crashes;
3. the crashed broker comes back; another broker is stopped cleanly, and comes back.

Then it reads every partition and counts: every acknowledged record must be stored
exactly once. It also checks the settings the lab asks for (three replicas,
``min.insync.replicas=2``, ``acks=all``, idempotence), which protect against failures
this short test cannot produce, such as a disk lost while a partition had one in-sync
copy. On real Kafka the minikafka-only faults are skipped and the brokers are killed
and restarted through docker compose.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..checks import Report


@dataclass
class Trial:
    """What the producer saw while the brokers were failing."""
    topic: str
    acked: dict[int, list[bytes]] = field(default_factory=dict)  # partition -> values, in acknowledgement order
    errors: Counter = field(default_factory=Counter)
    sent: int = 0
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def delivered(self, err, msg) -> None:
        with self._lock:
            if err is None:
                self.acked.setdefault(msg.partition(), []).append(msg.value())
            else:
                self.errors[err.name()] += 1

    def now(self) -> float:
        return time.monotonic() - self.started


class _Writer:
    """Produces numbered records as fast as the producer accepts them, until stopped."""

    def __init__(self, producer, trial: Trial):
        self.producer, self.trial = producer, trial
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lab05-writer", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.producer.produce(self.trial.topic, b"record-%07d" % self.trial.sent,
                                      str(self.trial.sent % 97).encode(), on_delivery=self.trial.delivered)
                self.trial.sent += 1
            except BufferError:
                pass  # the local queue is full (a partition has no leader): wait a little
            self.producer.poll(0.002)

    def __enter__(self) -> "_Writer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(10)
        self.producer.flush(30)


def check(topic_settings: dict[str, Any], producer_settings: dict[str, Any], *,
          bootstrap: str | None = None, seconds: float = 1.5) -> Trial | None:
    """Break the cluster while your producer writes to your topic; raise ``CheckFailed`` if
    an acknowledged record is lost or stored twice, or a required setting is missing."""
    from confluent_kafka import KafkaException, Producer

    from ..connection import current_bootstrap
    from ..handle import cluster
    from ..clients import new_topic
    from ..client_logs import quiet
    servers = bootstrap or current_bootstrap()
    with Report("Lab 05 · surviving a broker failure") as report:
        ok, topic = report.attempt(_create, new_topic, topic_settings, servers, what="Creating your topic")
        if not ok:
            return None
        settings = {"bootstrap.servers": servers, "partitioner": "murmur2_random", "linger.ms": 5,
                    "message.timeout.ms": 60_000, **{k: v for k, v in producer_settings.items()}}
        try:
            producer = Producer(quiet(settings))
        except KafkaException as e:
            report.check(False, "", f"These producer settings are refused by the client: {e.args[0].str()}")
            return None
        trial = Trial(topic)
        handle = cluster(servers)
        with _Writer(producer, trial):
            _break_things(handle, topic, trial, seconds)
        _judge(report, trial, servers, topic_settings, producer_settings)
        return trial


def _create(new_topic, settings: dict[str, Any], servers: str) -> str:
    return new_topic("lab05-orders", partitions=int(settings.get("partitions", 3)),
                     replication_factor=int(settings.get("replication_factor", -1)),
                     config=settings.get("config") or {}, bootstrap=servers)


def _leader_of(handle, topic: str, partition: int = 0) -> int:
    return handle.topology(topic)[partition].leader


def _break_things(handle, topic: str, trial: Trial, seconds: float) -> None:
    say = lambda text: print(f"  {trial.now():5.1f}s  {text}")  # noqa: E731
    time.sleep(seconds)
    brokers = sorted(handle.brokers())
    if handle.is_minikafka:
        for broker in brokers:
            handle.embedded.faults(broker).drop_responses("Produce", 1)
        say("every broker writes its next batch and then loses the acknowledgement")
        time.sleep(seconds)
    victim = _leader_of(handle, topic)
    followers = [b for b in brokers if b != victim]
    if handle.is_minikafka:
        for broker in followers:
            handle.slow_broker(broker, 1500)
        say(f"brokers {followers} fall behind (slow disks)")
        time.sleep(seconds)
    handle.crash_broker(victim)
    say(f"broker {victim}, leader of partition 0, crashes")
    if handle.is_minikafka:
        for broker in followers:
            handle.slow_broker(broker, 0)
    time.sleep(seconds)
    handle.start_broker(victim)
    say(f"broker {victim} is back")
    _wait_in_sync(handle, topic, len(brokers))
    second = followers[0]
    handle.stop_broker(second)
    say(f"broker {second} is stopped for maintenance")
    time.sleep(seconds)
    handle.start_broker(second)
    say(f"broker {second} is back")
    _wait_in_sync(handle, topic, len(brokers))
    time.sleep(seconds / 2)


def _wait_in_sync(handle, topic: str, brokers: int, timeout: float = 20) -> None:
    """Give replicas time to catch up and preferred leaders time to return (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        parts = handle.topology(topic)
        if all(len(p.isr) == min(len(p.replicas), brokers) and p.leader == p.replicas[0] for p in parts):
            return
        time.sleep(0.2)


def _judge(report: Report, trial: Trial, servers: str, topic_settings, producer_settings) -> None:
    from ..guarantees import read_topic
    stored = read_topic(servers, trial.topic, "read_uncommitted", timeout=30)
    by_partition: dict[int, Counter] = {}
    for s in stored:
        by_partition.setdefault(s.partition, Counter())[s.value] += 1
    acked = sum(len(v) for v in trial.acked.values())
    lost = [v for p, values in trial.acked.items() for v in values if by_partition.get(p, Counter())[v] == 0]
    twice = sorted({v for p, values in trial.acked.items() for v in values if by_partition.get(p, Counter())[v] > 1})
    print(f"  {trial.sent} records sent, {acked} acknowledged, {len(stored)} stored; "
          f"errors reported to the producer: {dict(trial.errors) or 'none'}")
    report.check(acked > 0, f"{acked} records were acknowledged",
                 "no record was acknowledged at all; is the producer able to write to the topic?")
    report.check(not lost, "every acknowledged record survived the failures",
                 f"{len(lost)} acknowledged records are gone (e.g. {lost[0].decode() if lost else ''}). "
                 "A record acknowledged by the leader alone dies with the leader: wait for all in-sync "
                 "replicas (acks), and keep more than one copy of each partition.")
    report.check(not twice, "no acknowledged record is stored twice",
                 f"{len(twice)} records are stored more than once (e.g. {twice[0].decode() if twice else ''}). "
                 "Lost acknowledgements made the producer retry batches the broker already had: "
                 "an idempotent producer lets the broker recognise them.")
    _settings_checks(report, topic_settings, producer_settings)


def _settings_checks(report: Report, topic_settings, producer_settings) -> None:
    config = {k: str(v) for k, v in (topic_settings.get("config") or {}).items()}
    replicas = int(topic_settings.get("replication_factor", -1))
    report.check(replicas >= 3, f"replication factor {replicas}: each partition survives two broker failures",
                 f"the replication factor is {replicas}; the lab asks for 3 copies of each partition. "
                 "A partition whose only copy is on a stopped broker accepts nothing until it returns.")
    min_isr = int(config.get("min.insync.replicas", 1))
    report.check(min_isr >= 2, f"min.insync.replicas={min_isr}: an acknowledged write is on two brokers at least",
                 f"min.insync.replicas is {min_isr}; with 1, acks=all can be satisfied by the leader alone "
                 "when its followers are down. The lab asks for 2.")
    acks = str(producer_settings.get("acks", producer_settings.get("request.required.acks", "all")))
    idempotent = str(producer_settings.get("enable.idempotence", "false")).lower() == "true"
    report.check(acks in ("all", "-1") and idempotent, "the producer waits for all in-sync replicas and is idempotent",
                 f"the producer uses acks={acks} and enable.idempotence={idempotent}; "
                 "the lab asks for acks=all and enable.idempotence=true.")
