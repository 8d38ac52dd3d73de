"""What lab 05's check does to the cluster while the learner's producer writes, step by step.

Each step breaks one thing and returns a ``Window``: when the step's broken state began
and ended, which brokers were down, and the partitions as the Admin API described them
meanwhile. ``broker_failure`` then judges what the producer saw in each window.

1. (minikafka) every broker loses one produce acknowledgement: the producer retries a
   batch the broker already has (idempotence);
2. (minikafka) the followers fall behind, then the leader of partition 0 crashes (acks);
3. maintenance: one broker is stopped cleanly, and writes must go on (availability);
4. a lone leader: the other two brokers are stopped, and acks=all writes must be refused
   until they are back (min.insync.replicas);
5. an out-of-sync replica as the only candidate: a follower of partition 0 is stopped and
   falls behind, then the in-sync replicas stop and the follower comes back alone. The
   partition must wait for an in-sync replica; an unclean leader election makes the
   follower leader, and the acknowledged records it never copied are lost.

On real Kafka the minikafka-only faults are skipped, and brokers are stopped, killed and
started through docker compose (see ``kafka_course.handle``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..handle import ClusterHandle, PartitionState
from ..i18n import _

MAX_GRACE = 30.0  # seconds the maintenance step may wait for late acknowledgements that are still arriving


@dataclass
class Window:
    """A stretch of time with part of the cluster down."""
    name: str
    down: list[int]
    start: float  # the brokers are down, leadership has moved
    end: float = 0.0  # the writes judged are those sent between start and end
    restarted: float = 0.0  # when the brokers started again
    partitions: list[PartitionState] = field(default_factory=list)  # as described during the window


class FailureScript:
    """Runs the steps on ``handle`` for ``topic``; ``say`` prints what happens, with a time."""

    def __init__(self, handle: ClusterHandle, topic: str, seconds: float, say: Callable[[str], None],
                 pending: Callable[[Window], int] | None = None):
        self.handle, self.topic, self.seconds, self.say = handle, topic, seconds, say
        self.pending = pending  # writes of a window neither acknowledged nor failed yet
        self.brokers = sorted(handle.brokers())

    def run(self) -> dict[str, Window]:
        try:
            time.sleep(self.seconds)
            if self.handle.is_minikafka:
                self.lost_acknowledgements()
            crashed = self.leader_crash()
            maintenance = self.maintenance(next(b for b in self.brokers if b != crashed))
            lone = self.lone_leader()
            windows = {"maintenance": maintenance, "lone leader": lone}
            unclean = self.out_of_sync_candidate()
            if unclean is not None:
                windows["out of sync"] = unclean
            return windows
        finally:
            self.restore()

    def restore(self) -> None:
        """Every broker up and at full speed again, whatever happened (a no-op when all is well)."""
        live = set(self.handle.brokers())
        for broker in self.brokers:
            if broker not in live:
                self.handle.start_broker(broker)
            if self.handle.is_minikafka:
                self.handle.slow_broker(broker, 0)

    def lost_acknowledgements(self) -> None:
        for broker in self.brokers:
            self.handle.embedded.faults(broker).drop_responses("Produce", 1)
        self.say(_("every broker writes its next batch and then loses the acknowledgement"))
        time.sleep(self.seconds)

    def leader_crash(self) -> int:
        victim = self._leader()
        followers = [b for b in self.brokers if b != victim]
        if self.handle.is_minikafka:
            for broker in followers:
                self.handle.slow_broker(broker, 1500)
            self.say(_("brokers {brokers} fall behind (slow disks)").format(brokers=followers))
            time.sleep(self.seconds)
        self.handle.crash_broker(victim)
        self.say(_("broker {broker}, leader of partition 0, crashes").format(broker=victim))
        if self.handle.is_minikafka:
            for broker in followers:
                self.handle.slow_broker(broker, 0)
        time.sleep(self.seconds)
        self._start([victim])
        return victim

    def maintenance(self, broker: int) -> Window:
        """One broker stopped cleanly for twice ``seconds``: the writes of the first half must
        all be acknowledged before it comes back.

        On a busy machine acknowledgements run late; while they still arrive (fewer writes
        pending at each look) the broker stays down a little longer, up to ``MAX_GRACE``, so
        a slow laptop does not fail a right answer. Writes that wait for the stopped broker
        make no progress, and it comes back after the usual ``seconds``."""
        self.handle.stop_broker(broker)
        window = Window("maintenance", [broker], time.monotonic())
        self.say(_("broker {broker} is stopped for maintenance").format(broker=broker))
        time.sleep(self.seconds)
        window.partitions = self.handle.topology(self.topic)
        window.end = time.monotonic()
        time.sleep(self.seconds)
        if self.pending is not None:
            deadline, left = time.monotonic() + MAX_GRACE, self.pending(window)
            while left and time.monotonic() < deadline:
                time.sleep(self.seconds / 2)
                now = self.pending(window)
                if now >= left:
                    break  # no progress: these writes wait for the stopped broker
                left = now
        window.restarted = time.monotonic()
        self._start([broker])
        return window

    def lone_leader(self) -> Window:
        """Every broker but the leader of partition 0 stopped: it leads every partition alone."""
        leader = self._leader()
        others = [b for b in self.brokers if b != leader]
        for broker in others:
            self.handle.stop_broker(broker)
        self._wait(lambda parts: all(p.leader == leader and p.isr == (leader,) for p in parts
                                     if leader in p.replicas))
        window = Window("lone leader", others, time.monotonic())
        self.say(_("brokers {brokers} are stopped: broker {leader} is the only in-sync replica left").format(
            brokers=others, leader=leader))
        time.sleep(self.seconds)
        window.partitions = self.handle.topology(self.topic)
        window.end = window.restarted = time.monotonic()
        self._start(others)
        return window

    def out_of_sync_candidate(self) -> Window | None:
        """A follower of partition 0 stopped while writes go on, then the in-sync replicas stopped
        and the follower started alone: the only live replica is out of sync. ``down`` holds the
        in-sync replicas; ``partitions`` show who led meanwhile. None with a single copy."""
        replicas = list(self.handle.topology(self.topic)[0].replicas)
        if len(replicas) < 2:
            return None
        leader = self._leader()
        laggard = [b for b in replicas if b != leader][-1]
        in_sync = [b for b in replicas if b != laggard]
        self.handle.stop_broker(laggard)
        self.say(_("broker {broker} is stopped while the writes go on: its copy of partition 0 falls behind").format(
            broker=laggard))
        time.sleep(self.seconds)
        for broker in in_sync:
            self.handle.stop_broker(broker)
        self.handle.start_broker(laggard)
        window = Window("out of sync", in_sync, time.monotonic())
        self.say(_("brokers {brokers} are stopped and broker {broker} is back: the only replica left is out of "
                   "sync").format(brokers=in_sync, broker=laggard))
        time.sleep(self.seconds)
        window.partitions = self.handle.topology(self.topic)
        window.end = window.restarted = time.monotonic()
        self._start(in_sync)
        return window

    def _start(self, brokers: list[int]) -> None:
        for broker in brokers:
            self.handle.start_broker(broker)
        back = _("brokers {brokers} are back") if len(brokers) > 1 else _("broker {brokers} is back")
        self.say(back.format(brokers=", ".join(map(str, brokers))))
        # Replicas catch up and preferred leaders return (bounded: a broken topic never gets there).
        self._wait(lambda parts: all(len(p.isr) == min(len(p.replicas), len(self.brokers))
                                     and p.leader == p.replicas[0] for p in parts), timeout=20)

    def _leader(self) -> int:
        return self.handle.topology(self.topic)[0].leader

    def _wait(self, done: Callable[[list[PartitionState]], bool], timeout: float = 10) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done(self.handle.topology(self.topic)):
                return True
            time.sleep(0.1)
        return False
