"""How one broker reaches the others: the one seam between brokers of a cluster.

In Apache Kafka brokers talk over the network: followers send Fetch requests to
leaders and the controller sends partition changes. The embedded cluster's brokers share
one process and one event loop, so each of those is a method call, and all of them pass
through ``Peers``: what one broker may ask of another's replicas is exactly the
``ReplicaHost`` protocol below, nothing else. Transactions (WriteTxnMarkers, KIP-890's
verification) have their own seam above this floor, ``transactions.channel``.
Two seams already have a network form: a follower's fetches (``fetcher.FetchSource``:
``sources.NetworkSource`` sends Fetch over TCP) and a leader's ISR changes
(``isr.IsrChannel``, AlterPartition).

``LocalReplicas`` is the other narrow view: what a coordinator needs of the broker it
runs on (its replicas, the cluster metadata, creating its internal topic).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from ..config import BrokerConfig
from ..metadata import ClusterMetadata, PartitionInfo, TopicInfo
from .partition import Partition
from .throttle import ByteRate


class ReplicaHost(Protocol):
    """One broker as the others see it."""

    node_id: int
    leader_quota: ByteRate  # leader.replication.throttled.rate, kept by the leader's broker

    def local_replica(self, topic: str, index: int) -> Partition | None: ...

    def open_replicas(self, topic: TopicInfo) -> None: ...

    def drop_replicas(self, topic: str) -> None: ...

    def drop_replica(self, topic: str, index: int) -> None: ...

    def on_partition_change(self, topic: str, info: PartitionInfo) -> None: ...


class LocalReplicas(Protocol):
    """What a coordinator needs of its own broker."""

    node_id: int
    config: BrokerConfig
    metadata: ClusterMetadata

    def leader_replica(self, topic: str, index: int) -> Partition: ...

    def local_replica(self, topic: str, index: int) -> Partition | None: ...

    def create_internal_topic(self, name: str, partitions: int, configs: dict[str, object]) -> None: ...


class Peers:
    """The live brokers of a cluster, reached only through ``ReplicaHost`` methods."""

    def __init__(self, hosts: Mapping[int, ReplicaHost]):
        self._hosts = hosts  # live brokers by id, owned by the Cluster

    def __len__(self) -> int:
        return len(self._hosts)

    def __contains__(self, broker_id: int) -> bool:
        return broker_id in self._hosts

    def live(self) -> list[int]:
        return sorted(self._hosts)

    def get(self, broker_id: int) -> ReplicaHost | None:
        return self._hosts.get(broker_id)

    def __iter__(self) -> Iterator[ReplicaHost]:
        return iter(list(self._hosts.values()))

    # -- what brokers ask of each other ----------------------------------------------------
    def leader_replica(self, topic: str, info: PartitionInfo) -> Partition | None:
        """The leader's replica of a partition, if its broker is up and leads it (Fetch's target)."""
        host = self._hosts.get(info.leader)
        part = host.local_replica(topic, info.index) if host else None
        return part if part is not None and part.is_leader else None

    def open_replicas(self, topic: TopicInfo) -> None:
        for host in self:
            host.open_replicas(topic)

    def drop_replicas(self, name: str) -> None:
        for host in self:
            host.drop_replicas(name)

    def drop_replica(self, broker_id: int, topic: str, index: int) -> None:
        """StopReplica with delete: the broker no longer holds the partition (a reassignment moved it)."""
        host = self._hosts.get(broker_id)
        if host is not None:
            host.drop_replica(topic, index)

    def publish(self, topic: str, info: PartitionInfo) -> None:
        """The controller's news (LeaderAndIsr): tell every live replica of the partition."""
        for broker_id in info.replicas:
            host = self._hosts.get(broker_id)
            if host is not None:
                host.on_partition_change(topic, info)
