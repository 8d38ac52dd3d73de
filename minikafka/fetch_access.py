"""What Fetch and OffsetForLeaderEpoch ask of a broker: a replica to read, and the replication rules.

``Broker`` inherits ``FetchAccess``, which implements the handlers' ``FetchPort`` and
``EpochsPort`` (``handlers.ports``). A consumer reads the leader, or from Fetch v11 a
follower up to its high watermark (KIP-392), and the leader may point it at a follower in
its rack (``replica.selector``). A follower broker's fetch is answered by the leader-side
replication rules shared with in-process replication (``replica.fetcher.serve_follower``),
within the leader's replication throttle (KIP-73). The handler gets the replica as a
read-only view (``ports.ReadView``: its offsets, ``read``, ``aborted_transactions`` and
``waiter`` for the long poll) and never a ``Partition``'s other powers.
"""

from __future__ import annotations

from collections.abc import Mapping

from .clock import Clock, now_ms
from .config import BrokerConfig
from .errors import ErrorCode, KafkaError
from .metadata import ClusterMetadata
from .replica.fetcher import FollowerRead, check_leader_epoch, epoch_end, leader_throttled, serve_follower
from .replica.partition import Partition
from .replica.selector import NO_PREFERENCE, preferred_read_replica
from .replica.throttle import ByteRate


class FetchAccess:
    """The Fetch and OffsetForLeaderEpoch ports of a broker (a mixin of ``Broker``)."""

    node_id: int
    config: BrokerConfig
    metadata: ClusterMetadata
    leader_quota: ByteRate
    partitions: Mapping[tuple[str, int], Partition]
    clock: Clock

    def monotonic_ms(self) -> int:
        return self.clock.monotonic_ms()

    def leader_replica(self, topic: str, index: int) -> Partition:
        raise NotImplementedError

    def consumer_replica(self, topic: str, index: int, rack_id: str | None, fetch_offset: int
                         ) -> tuple[Partition, int]:
        """The replica a consumer reads and the preferred read replica (-1: read here). ``rack_id`` None:
        a version before follower fetching (KIP-392), which only a leader serves."""
        try:
            part = self.leader_replica(topic, index)
        except KafkaError as e:
            local = self.partitions.get((topic, index)) if rack_id is not None else None
            if local is None or e.code != ErrorCode.not_leader_or_follower:
                raise
            return local, NO_PREFERENCE  # a follower serves consumers up to its high watermark
        if rack_id is None:
            return part, NO_PREFERENCE
        return part, preferred_read_replica(self.config["replica.selector.class"], part, rack_id, fetch_offset,
                                            self.metadata.racks, self.metadata.brokers)

    def follower_replica(self, topic: str, index: int) -> Partition:
        """This broker's replica of a partition a follower fetches (NOT_LEADER_OR_FOLLOWER if it holds none)."""
        part = self.partitions.get((topic, index))
        if part is None:
            known = self.metadata.topics.get(topic)
            if known is not None and index < len(known.partitions):
                raise KafkaError(ErrorCode.not_leader_or_follower, f"Broker {self.node_id} holds no {topic}-{index}.")
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        return part

    def follower_read(self, topic: str, index: int, follower: int, current_leader_epoch: int, fetch_offset: int,
                      last_fetched_epoch: int, max_bytes: int) -> FollowerRead:
        """One partition of a follower's fetch, as the leader serves it, within its replication throttle."""
        part, now = self.follower_replica(topic, index), now_ms()
        throttled = leader_throttled(part, follower)
        if throttled:
            max_bytes = min(max_bytes, self.leader_quota.allowance(now))
        read = serve_follower(part, follower, current_leader_epoch, fetch_offset, last_fetched_epoch, max_bytes)
        if throttled:
            self.leader_quota.record(len(read.records), now)
        return read

    def epoch_end_offset(self, topic: str, index: int, current_leader_epoch: int, leader_epoch: int
                         ) -> tuple[int, int]:
        """OffsetForLeaderEpoch at the leader: (the largest epoch up to ``leader_epoch``, where it ended)."""
        part = self.partitions.get((topic, index)) or self.leader_replica(topic, index)
        check_leader_epoch(part, current_leader_epoch)
        if not part.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"Broker {self.node_id} does not lead {topic}-{index}.")
        epoch, end = epoch_end(part, leader_epoch)
        return (epoch, end) if epoch >= 0 else (epoch, -1)
