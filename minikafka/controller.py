"""The controller: leader elections, ISR changes, and brokers coming and going.

In Apache Kafka the controller (a KRaft quorum member) owns partition state and tells
brokers who leads what. Here one ``Controller`` object per cluster does that job; the
broker that hosts it (``controller_id``) is the lowest live broker id, re-elected when
that broker stops. Its rules are Kafka's:

* a new leader comes from the ISR; each election bumps the leader epoch;
* a broker that stops leaves every ISR, except that the last ISR member stays listed,
  so the partition waits offline for it (unless ``unclean.leader.election.enable``
  lets an out-of-sync replica lead, and lose what only the old leader had);
* when a broker returns and catches up it re-enters the ISR, and the preferred
  leader (first replica) takes its partitions back;
* an administrator may ask for an election (ElectLeaders, KIP-460) or move a
  partition's replicas to other brokers (KIP-455; the rules are in ``reassignment``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

from . import reassignment
from .clock import SYSTEM, Clock
from .errors import ErrorCode, KafkaError
from .metadata import ClusterMetadata, PartitionInfo, TopicInfo

log = logging.getLogger("minikafka.controller")

NO_LEADER = -1


class BrokerView(Protocol):
    """What the controller needs of the brokers: who is alive, and a way to tell them news.

    The embedded cluster passes its ``replica.peers.Peers`` (the live broker objects, told by
    method calls). A KRaft quorum controller passes a view where alive means registered and
    unfenced, and where telling is nothing: brokers learn every change from the metadata log.
    """

    def __contains__(self, broker_id: int) -> bool: ...

    def live(self) -> list[int]: ...

    def publish(self, topic: str, info: PartitionInfo) -> None: ...

    def open_replicas(self, topic: TopicInfo) -> None: ...

    def drop_replica(self, broker_id: int, topic: str, index: int) -> None: ...


Brokers = TypeVar("Brokers", bound=BrokerView)


class Controller(Generic[Brokers]):
    def __init__(self, metadata: ClusterMetadata, peers: Brokers, clock: Clock = SYSTEM):
        self.metadata, self.clock = metadata, clock  # the wall clock stamps when a broker stopped
        self.peers = peers  # the live brokers, told of every partition change
        self.registered: set[int] = set()  # every broker that has joined (a stopped one stays registered)
        self.departed: dict[int, tuple[int, int]] = {}  # stopped broker -> (metadata log end offset, when)

    # -- who is alive -------------------------------------------------------------
    def elect_controller(self) -> None:
        live = self.peers.live()
        new = live[0] if live else -1
        if new >= 0 and new != self.metadata.controller_id:
            self.metadata.controller_changed(new)
        self.metadata.controller_id = new

    def live(self, broker_id: int) -> bool:
        return broker_id in self.peers

    # -- elections ------------------------------------------------------------------
    def elect_leader(self, topic: str, info: PartitionInfo, *, exclude: tuple[int, ...] = ()) -> None:
        """Kafka's order: a live ISR member, then a live eligible leader replica (KIP-966), then,
        with unclean.leader.election.enable, any live replica."""
        candidates = [b for b in info.replicas if b in info.isr and self.live(b) and b not in exclude]
        if candidates:
            self._set_leader(topic, info, candidates[0])
            return
        eligible = [b for b in info.replicas if b in info.elr and self.live(b) and b not in exclude]
        if eligible:
            log.warning("%s-%d: no in-sync replica is alive; eligible leader replica %d leads", topic, info.index,
                        eligible[0])
            info.isr, info.elr = [eligible[0]], [b for b in info.elr if b != eligible[0]]
            self._set_leader(topic, info, eligible[0])
            return
        unclean = self.metadata.topic_config(topic)["unclean.leader.election.enable"]
        others = [b for b in info.replicas if self.live(b) and b not in exclude]
        if unclean and others:
            log.warning("unclean election: %s-%d led by out-of-sync broker %d; data may be lost",
                        topic, info.index, others[0])
            info.isr = [others[0]]
            self._set_leader(topic, info, others[0])
        elif info.leader != NO_LEADER:
            log.warning("%s-%d is offline: no in-sync replica is alive", topic, info.index)
            self._set_leader(topic, info, NO_LEADER)

    def _set_leader(self, topic: str, info: PartitionInfo, leader: int) -> None:
        info.leader = leader
        info.leader_epoch += 1
        self._publish(topic, info)

    def _publish(self, topic: str, info: PartitionInfo) -> None:
        """Record the partition's new state in the metadata log and tell the brokers."""
        self.metadata.partition_changed(topic, info)
        self.peers.publish(topic, info)

    def preferred_election(self, topic: str, info: PartitionInfo) -> None:
        preferred = info.replicas[0]
        if info.leader != preferred and preferred in info.isr and self.live(preferred):
            self._set_leader(topic, info, preferred)

    def requested_election(self, topic: str, info: PartitionInfo, unclean: bool) -> None:
        """ElectLeaders (KIP-460): elect as asked, or raise the error Kafka's controller gives.

        PREFERRED: the first replica leads if it is alive and in sync. UNCLEAN: only a
        partition with no leader gets one, from the ISR if a member is alive, else from
        any live replica (what only the old leader had is lost).
        """
        if not unclean:
            preferred = info.replicas[0]
            if info.leader == preferred:
                raise KafkaError(ErrorCode.election_not_needed, f"Broker {preferred}, the preferred leader, leads.")
            if preferred not in info.isr or not self.live(preferred):
                raise KafkaError(ErrorCode.preferred_leader_not_available,
                                 f"The preferred leader, broker {preferred}, is not alive and in sync.")
            self._set_leader(topic, info, preferred)
            return
        if info.leader != NO_LEADER:
            raise KafkaError(ErrorCode.election_not_needed, f"Broker {info.leader} leads {topic}-{info.index}.")
        in_sync = [b for b in info.replicas if b in info.isr and self.live(b)]
        chosen = (in_sync or [b for b in info.replicas if self.live(b)] or [NO_LEADER])[0]
        if chosen == NO_LEADER:
            raise KafkaError(ErrorCode.eligible_leaders_not_available, "No replica of the partition is alive.")
        if not in_sync:
            log.warning("unclean election asked for: %s-%d led by out-of-sync broker %d", topic, info.index, chosen)
            info.isr = [chosen]
        self._set_leader(topic, info, chosen)

    # -- reassignment (KIP-455) ---------------------------------------------------------
    def reassign(self, topic: str, info: PartitionInfo, target: list[int] | None,
                 allow_replication_factor_change: bool = True) -> None:
        """Move a partition to ``target`` replicas (None cancels the move in progress)."""
        if target is None:
            unclean = self.metadata.topic_config(topic)["unclean.leader.election.enable"]
            self._settle(topic, info, reassignment.revert(info, unclean))
            return
        reassignment.check_target(target, self.registered, reassignment.target(info), allow_replication_factor_change)
        if not reassignment.start(info, target):
            return
        log.info("reassigning %s-%d to %s (adding %s, removing %s)", topic, info.index, target,
                 info.adding_replicas, info.removing_replicas)
        self._publish(topic, info)
        self.peers.open_replicas(self.metadata.topics[topic])  # newcomers start following the leader
        self.maybe_complete_reassignment(topic, info)

    def maybe_complete_reassignment(self, topic: str, info: PartitionInfo) -> None:
        if reassignment.in_progress(info) and reassignment.ready(info):
            log.info("reassignment of %s-%d complete: replicas %s", topic, info.index, reassignment.target(info))
            self._settle(topic, info, reassignment.complete(info))

    def _settle(self, topic: str, info: PartitionInfo, gone: list[int]) -> None:
        """After the replicas changed: a leader that left is replaced, brokers hear the news,
        and the replicas that left are deleted (a stopped broker deletes its own at start)."""
        if info.leader not in info.replicas or info.leader not in info.isr:
            self.elect_leader(topic, info, exclude=tuple(gone))
        else:
            self._publish(topic, info)
        for broker_id in gone:
            self.peers.drop_replica(broker_id, topic, info.index)

    # -- the ISR and the eligible leader replicas (KIP-966) ------------------------------------
    def _elr_enabled(self) -> bool:
        return self.metadata.config["eligible.leader.replicas.version"] >= 1

    def _leave_isr(self, topic: str, info: PartitionInfo, broker_id: int) -> None:
        """``broker_id`` leaves the ISR; below min.insync.replicas it becomes an eligible leader
        replica: the high watermark has not moved since, so it holds all that consumers saw."""
        info.isr = [b for b in info.isr if b != broker_id]
        if self._elr_enabled() and len(info.isr) < self.metadata.topic_config(topic)["min.insync.replicas"]:
            info.elr = [b for b in info.replicas if b in info.elr or b == broker_id]
            info.last_known_elr = [b for b in info.last_known_elr if b != broker_id]

    def _fit_elr(self, topic: str, info: PartitionInfo) -> None:
        """Enough in sync again: the ISR's guarantee is back, and the ELR is not needed."""
        if len(info.isr) >= self.metadata.topic_config(topic)["min.insync.replicas"] or not self._elr_enabled():
            info.elr, info.last_known_elr = [], []
        info.elr = [b for b in info.elr if b not in info.isr]

    def shrink_isr(self, topic: str, info: PartitionInfo, broker_id: int) -> None:
        if broker_id in info.isr and len(info.isr) > 1:
            self._leave_isr(topic, info, broker_id)
            log.info("ISR of %s-%d shrank to %s (broker %d fell behind)", topic, info.index, info.isr, broker_id)
            self._publish(topic, info)

    def expand_isr(self, topic: str, info: PartitionInfo, broker_id: int) -> None:
        if broker_id not in info.isr and self.live(broker_id):
            info.isr = [b for b in info.replicas if b in info.isr or b == broker_id]
            self._fit_elr(topic, info)
            log.info("ISR of %s-%d grew to %s (broker %d caught up)", topic, info.index, info.isr, broker_id)
            self._publish(topic, info)
            self.preferred_election(topic, info)
            self.maybe_complete_reassignment(topic, info)

    def set_isr(self, topic: str, info: PartitionInfo, isr: list[int]) -> None:
        """The leader says who is in sync (AlterPartition): leavers may become eligible leader
        replicas, and a returning preferred leader takes the partition back. As Kafka's controller, it
        judges the new ISR as a whole: below min.insync.replicas, every replica it drops is eligible
        (all of them held every committed record, whether they leave one by one or together)."""
        gone = [b for b in info.isr if b not in isr]
        info.isr = [b for b in info.replicas if b in isr]
        if gone and self._elr_enabled() and len(info.isr) < self.metadata.topic_config(topic)["min.insync.replicas"]:
            info.elr = [b for b in info.replicas if b in info.elr or b in gone]
            info.last_known_elr = [b for b in info.last_known_elr if b not in gone]
        self._fit_elr(topic, info)
        log.info("ISR of %s-%d is now %s", topic, info.index, info.isr)
        self._publish(topic, info)
        self.preferred_election(topic, info)
        self.maybe_complete_reassignment(topic, info)

    # -- brokers coming and going ----------------------------------------------------------
    def partitions(self) -> Iterator[tuple[str, PartitionInfo]]:
        for topic in list(self.metadata.topics.values()):
            for info in topic.partitions:
                yield topic.name, info

    def broker_leaving(self, broker_id: int) -> None:
        """Move leadership away and drop the broker from every ISR (controlled shutdown)."""
        self.departed[broker_id] = (self.metadata.end_offset, self.clock.wall_ms())
        for topic, info in self.partitions():
            if broker_id not in info.replicas:
                continue
            if broker_id in info.isr and len(info.isr) > 1:
                self._leave_isr(topic, info, broker_id)
            if broker_id in info.elr:  # an eligible leader replica that is gone is only last known
                info.elr = [b for b in info.elr if b != broker_id]
                info.last_known_elr = [b for b in info.replicas if b in info.last_known_elr or b == broker_id]
            if info.leader == broker_id:
                self.elect_leader(topic, info, exclude=(broker_id,))
            else:
                self._publish(topic, info)

    def broker_joined(self, broker_id: int) -> None:
        """Offline partitions whose in-sync replica returned get a leader again."""
        self.registered.add(broker_id)
        self.departed.pop(broker_id, None)
        self.elect_controller()
        for topic, info in self.partitions():
            if broker_id in info.last_known_elr:  # back, with all that consumers saw: eligible again
                info.last_known_elr = [b for b in info.last_known_elr if b != broker_id]
                info.elr = [b for b in info.replicas if b in info.elr or b == broker_id]
                self._fit_elr(topic, info)
                if info.leader != NO_LEADER:
                    self._publish(topic, info)
            if broker_id in info.replicas and info.leader == NO_LEADER:
                self.elect_leader(topic, info)
