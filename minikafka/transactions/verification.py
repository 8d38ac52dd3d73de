"""A partition leader's check of a transactional write (KIP-890's verification).

Before the first write of a transaction to a partition, the leader asks the
transaction coordinator whether the partition was added to that producer's ongoing
transaction; a write that fails the check is refused with INVALID_TXN_STATE and never
reaches the log. Later writes of the same transaction to the partition skip the
question: the partition's producer state already shows the open transaction. A
write from an older epoch of the producer (a zombie, fenced when a new instance with the same
transactional id initialized) is refused with INVALID_PRODUCER_EPOCH, as Kafka's coordinator
answers the leader's question: the zombie learns it is fenced at its next send.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ..metadata import ClusterMetadata
from ..records import BatchHeader
from ..replica.partition import Partition
from ..replica.peers import Peers, ReplicaHost
from .coordinator import TOPIC, partition_for_key


def _coordinator(transactional_id: str, metadata: ClusterMetadata, peers: Peers) -> ReplicaHost | None:
    state_topic = metadata.topics.get(TOPIC)
    if state_topic is None:
        return None
    info = state_topic.partitions[partition_for_key(transactional_id, len(state_topic.partitions))]
    return peers.get(info.leader)


def verify_write(part: Partition, header: BatchHeader, transactional_id: str, metadata: ClusterMetadata,
                 peers: Peers) -> None:
    if header.producer_id in part.producers.open_transactions():
        return  # this transaction already wrote here: verified then
    coordinator = _coordinator(transactional_id, metadata, peers)
    if coordinator is not None:
        coordinator.verify_transaction(transactional_id, header.producer_id, header.producer_epoch, part.topic,
                                       part.index)


def verify_offset_commit(transactional_id: str, producer_id: int, producer_epoch: int, metadata: ClusterMetadata,
                         peers: Peers) -> None:
    """TxnOffsetCommit: the group coordinator checks the producer with the transaction coordinator."""
    coordinator = _coordinator(transactional_id, metadata, peers)
    if coordinator is None:
        raise KafkaError(ErrorCode.invalid_producer_id_mapping)
    coordinator.verify_transaction_producer(transactional_id, producer_id, producer_epoch)
