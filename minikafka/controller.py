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
  leader (first replica) takes its partitions back.
"""

from __future__ import annotations

import logging

from .metadata import ClusterMetadata, PartitionInfo
from .replica.peers import Peers

log = logging.getLogger("minikafka.controller")

NO_LEADER = -1


class Controller:
    def __init__(self, metadata: ClusterMetadata, peers: Peers):
        self.metadata = metadata
        self.peers = peers  # the live brokers, told of every partition change

    # -- who is alive -------------------------------------------------------------
    def elect_controller(self) -> None:
        live = self.peers.live()
        self.metadata.controller_id = live[0] if live else -1

    def live(self, broker_id: int) -> bool:
        return broker_id in self.peers

    # -- elections ------------------------------------------------------------------
    def elect_leader(self, topic: str, info: PartitionInfo, *, exclude: tuple[int, ...] = ()) -> None:
        candidates = [b for b in info.replicas if b in info.isr and self.live(b) and b not in exclude]
        if candidates:
            self._set_leader(topic, info, candidates[0])
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

    # -- the ISR --------------------------------------------------------------------
    def shrink_isr(self, topic: str, info: PartitionInfo, broker_id: int) -> None:
        if broker_id in info.isr and len(info.isr) > 1:
            info.isr = [b for b in info.isr if b != broker_id]
            log.info("ISR of %s-%d shrank to %s (broker %d fell behind)", topic, info.index, info.isr, broker_id)
            self._publish(topic, info)

    def expand_isr(self, topic: str, info: PartitionInfo, broker_id: int) -> None:
        if broker_id not in info.isr and self.live(broker_id):
            info.isr = [b for b in info.replicas if b in info.isr or b == broker_id]
            log.info("ISR of %s-%d grew to %s (broker %d caught up)", topic, info.index, info.isr, broker_id)
            self._publish(topic, info)
            self.preferred_election(topic, info)

    # -- brokers coming and going ----------------------------------------------------------
    def partitions(self):
        for topic in list(self.metadata.topics.values()):
            for info in topic.partitions:
                yield topic.name, info

    def broker_leaving(self, broker_id: int) -> None:
        """Move leadership away and drop the broker from every ISR (controlled shutdown)."""
        for topic, info in self.partitions():
            if broker_id not in info.replicas:
                continue
            if broker_id in info.isr and len(info.isr) > 1:
                info.isr = [b for b in info.isr if b != broker_id]
            if info.leader == broker_id:
                self.elect_leader(topic, info, exclude=(broker_id,))
            else:
                self._publish(topic, info)

    def broker_joined(self, broker_id: int) -> None:
        """Offline partitions whose in-sync replica returned get a leader again."""
        self.elect_controller()
        for topic, info in self.partitions():
            if broker_id in info.replicas and info.leader == NO_LEADER:
                self.elect_leader(topic, info)
