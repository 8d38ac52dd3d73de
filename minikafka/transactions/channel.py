"""How transactions cross brokers: the transaction coordinator's markers and the leaders' questions.

Two kinds of request travel between brokers for a transaction (KIP-98, KIP-890):

- the coordinator's WriteTxnMarkers to each partition's leader, ending the transaction there
  (Kafka's ``TransactionMarkerChannelManager``; a partition whose leader could not write it is
  sent again, to whichever broker leads it by then);
- a partition leader's (or a group coordinator's) question to the transaction coordinator: is
  this partition in the producer's ongoing transaction (AddPartitionsToTxn v4+ ``verify_only``),
  or, with transaction protocol v2, please add it.

``TxnPeers`` is that vocabulary and nothing else; the replica floor (``replica.peers``) knows
none of it. ``InProcessTxnPeers`` is the embedded cluster's: its brokers share one event loop,
so each request is a method call on the broker object (``TxnHost``). ``network.NetworkTxnPeers``
sends the same requests over TCP, for brokers that are processes of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ..errors import ErrorCode, KafkaError

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Marker:
    """One WriteTxnMarkers entry: which producer's transaction ends, and how."""

    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int  # the leader epoch of the coordinator's __transaction_state partition


class TxnHost(Protocol):
    """One broker as the transaction traffic of another broker in the same process reaches it."""

    async def write_txn_marker(self, topic: str, index: int, producer_id: int, producer_epoch: int,
                               commit: bool) -> ErrorCode: ...

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, topic: str,
                           index: int) -> None: ...

    def verify_transaction_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> None: ...

    async def add_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                 topic: str, index: int) -> None: ...

    async def add_offsets_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                         group_id: str) -> None: ...


class TxnPeers(Protocol):
    """What a broker asks other brokers for transactions; each question raises ``KafkaError``."""

    async def write_markers(self, broker_id: int, marker: Marker,
                            partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """WriteTxnMarkers to ``broker_id``: each partition's answer (NONE: the marker is written)."""
        ...

    async def verify(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                     topic: str, index: int) -> None:
        """Is the partition in the producer's ongoing transaction (KIP-890's verification)?"""
        ...

    async def verify_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int,
                             producer_epoch: int, group_id: str) -> None:
        """TxnOffsetCommit: may this producer commit offsets in its transaction?"""
        ...

    async def add_partition(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                            topic: str, index: int) -> None:
        """Transaction protocol v2: add the partition to the producer's transaction."""
        ...

    async def add_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                          group_id: str) -> None:
        """Transaction protocol v2: add the group's offsets partition to the producer's transaction."""
        ...

    def close(self) -> None: ...


def unreachable(broker_id: int) -> KafkaError:
    return KafkaError(ErrorCode.coordinator_not_available, f"The transaction coordinator, broker {broker_id}, "
                                                           "cannot be reached; retry shortly.")


class InProcessTxnPeers:
    """Transaction requests as method calls on the live brokers of this process (the embedded cluster)."""

    def __init__(self, hosts: Mapping[int, TxnHost]):
        self._hosts = hosts  # live brokers by id, owned by whoever assembles them

    def _host(self, broker_id: int) -> TxnHost:
        host = self._hosts.get(broker_id)
        if host is None:
            raise unreachable(broker_id)
        return host

    async def write_markers(self, broker_id: int, marker: Marker,
                            partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        host = self._hosts.get(broker_id)
        if host is None:
            return dict.fromkeys(partitions, ErrorCode.broker_not_available)
        return {(topic, index): await host.write_txn_marker(topic, index, marker.producer_id, marker.producer_epoch,
                                                            marker.commit) for topic, index in partitions}

    async def verify(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                     topic: str, index: int) -> None:
        host = self._hosts.get(coordinator_id)
        if host is not None:  # a coordinator that is down has nothing to say against the write
            host.verify_transaction(transactional_id, producer_id, producer_epoch, topic, index)

    async def verify_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int,
                             producer_epoch: int, group_id: str) -> None:
        host = self._hosts.get(coordinator_id)
        if host is None:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping)
        host.verify_transaction_producer(transactional_id, producer_id, producer_epoch)

    async def add_partition(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                            topic: str, index: int) -> None:
        await self._host(coordinator_id).add_to_transaction(transactional_id, producer_id, producer_epoch, topic,
                                                            index)

    async def add_offsets(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                          group_id: str) -> None:
        await self._host(coordinator_id).add_offsets_to_transaction(transactional_id, producer_id, producer_epoch,
                                                                    group_id)

    def close(self) -> None:
        pass
