"""``GroupMember``: one consumer of a group, polling in its own thread.

In production every member of a consumer group is usually its own process. Running
each member's poll loop in a thread lets one notebook show a whole group at work:
members join, share the partitions, leave, and the rest take over. The loop is the
ordinary kafka-python one (``poll``, handle, commit); a rebalance listener keeps a
copy of the member's partitions that other threads may read safely.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kafka import ConsumerRebalanceListener, KafkaConsumer, TopicPartition

from .connection import current_bootstrap
from .i18n import N_, _

if TYPE_CHECKING:
    from kafka.consumer.fetcher import ConsumerRecord

# Fast heartbeats make rebalances quick enough to watch; 6 s is the smallest session
# timeout a real Kafka broker accepts by default (group.min.session.timeout.ms).
# A member rejoins a rebalance only between two polls, so small batches (max_poll_records)
# keep rebalances short even when records take a while to process.
# What a member's ``events`` say happened, in the course's language (the keys drive the logic).
EVENTS = {"revoked": N_("revoked"), "assigned": N_("assigned"), "left": N_("left")}
DEFAULTS = {"auto_offset_reset": "earliest", "heartbeat_interval_ms": 250, "session_timeout_ms": 6000,
            "max_poll_records": 20}


class _Tracker(ConsumerRebalanceListener):
    def __init__(self, member: GroupMember):
        self.member = member

    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self.member._changed("revoked", revoked)

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self.member._changed("assigned", assigned)


class GroupMember:
    """A group member with its own poll loop.

    ``process(record)`` is called for every record (default: nothing); ``delay`` adds
    seconds of pretend work per record. ``handled`` lists ``(partition, offset)`` of
    every record processed, ``events`` the assignments and revocations, with times.
    Extra keyword arguments go to ``KafkaConsumer`` (``partition_assignment_strategy``,
    ``enable_auto_commit``, ...).
    """

    def __init__(self, name: str, topics: str | Iterable[str], group: str, *,
                 process: Callable[[Any], None] | None = None, delay: float = 0.0,
                 bootstrap: str | None = None, start: bool = True, **config: Any):
        self.name, self.group = name, group
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.process, self.delay = process, delay
        self.config = {**DEFAULTS, "client_id": name, **config}
        self.bootstrap = bootstrap or current_bootstrap()
        self.handled: list[tuple[int, int]] = []
        self.events: list[tuple[float, str, list[TopicPartition]]] = []
        self.error: BaseException | None = None
        self._partitions: set[TopicPartition] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._born = time.monotonic()
        if start:
            self.start()

    def __repr__(self) -> str:
        return f"<member {self.name} of {self.group}: partitions {self.partitions}, handled {len(self.handled)}>"

    # -- what other threads may look at -------------------------------------------------
    def assignment(self) -> set[TopicPartition]:
        with self._lock:
            return set(self._partitions)

    @property
    def partitions(self) -> list[int]:
        return sorted(tp.partition for tp in self.assignment())

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> GroupMember:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"member-{self.name}", daemon=True)
            self._thread.start()
        return self

    def leave(self, timeout: float = 15) -> None:
        """Stop polling and leave the group politely (LeaveGroup): a rebalance starts at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        consumer = None
        try:
            consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=self.group, **self.config)
            consumer.subscribe(self.topics, listener=_Tracker(self))
            while not self._stop.is_set():
                # A generous timeout: kafka-python 3.0 can lose track of a rebalance when
                # poll() times out while its JoinGroup or SyncGroup is still in flight.
                for records in consumer.poll(timeout_ms=1000).values():
                    for record in records:
                        self._handle(record)
                        if self._stop.is_set():
                            break
        except BaseException as e:  # noqa: BLE001 - kept for the notebook to show
            self.error = e
        finally:
            if consumer is not None:
                consumer.close()
            self._changed("left", self.assignment())

    def _handle(self, record: ConsumerRecord) -> None:
        if self.process is not None:
            self.process(record)
        if self.delay:
            time.sleep(self.delay)  # pretend work
        self.handled.append((record.partition, record.offset))

    def _changed(self, what: str, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            if what == "assigned":
                self._partitions |= set(partitions)
            else:
                self._partitions -= set(partitions)
        self.events.append((time.monotonic() - self._born, _(EVENTS[what]), sorted(partitions)))


def group_view(group: str, *, bootstrap: str | None = None) -> tuple[str, dict[str, set[tuple[str, int]]]]:
    """The coordinator's view of a group (DescribeGroups): its state, and client id -> partitions."""
    from .clients import admin
    described = admin(bootstrap).describe_consumer_groups([group])[group].result(10)
    owned = {m.client_id: {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions}
             for m in described.members}
    return described.state.name, owned


def wait_for_members(members: Iterable[GroupMember], timeout: float = 30) -> bool:
    """Wait until a rebalance is over: the coordinator calls the group stable, every
    partition of the members' topics has one owner, and every member knows its own
    partitions. Returns False (and does not raise) on timeout."""
    from .clients import partitions_of
    members = list(members)
    if not members:
        return True
    group, bootstrap = members[0].group, members[0].bootstrap
    everything = {(t, p) for t in members[0].topics for p in partitions_of(t, bootstrap=bootstrap)}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mine = {m.name: {(tp.topic, tp.partition) for tp in m.assignment()} for m in members}
        state, theirs = group_view(group, bootstrap=bootstrap)
        owned = [tp for parts in mine.values() for tp in parts]
        if state == "STABLE" and theirs == mine and len(owned) == len(set(owned)) and set(owned) == everything:
            return True
        time.sleep(0.05)
    return False


def leave_all(members: Iterable[GroupMember], timeout: float = 15) -> None:
    """Let several members leave at the same time (each finishes its current poll first)."""
    members = list(members)
    for member in members:
        member._stop.set()
    for member in members:
        member.leave(timeout)
