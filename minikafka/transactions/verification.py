"""A partition leader's check of a transactional write (KIP-890's verification).

Before the first write of a transaction to a partition, the leader asks the
transaction coordinator whether the partition was added to that producer's ongoing
transaction; a write that fails the check is refused with INVALID_TXN_STATE and never
reaches the log. Later writes of the same transaction to the partition skip the
question: the partition's producer state already shows the open transaction. A
write from an older epoch of the producer (a zombie, fenced when a new instance with the same
transactional id initialized) is refused with INVALID_PRODUCER_EPOCH, as Kafka's coordinator
answers the leader's question: the zombie learns it is fenced at its next send.

With transaction protocol v2 (KIP-890 part 2: Produce v12+ and TxnOffsetCommit v5+ on a
cluster that finalizes ``transaction.version`` 2) the producer never adds partitions
itself: instead of the question, the leader (or the group coordinator) asks the
coordinator to add the partition, with the same answers for a fenced producer.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ..metadata import ClusterMetadata
from ..records import BatchHeader
from ..replica.partition import Partition
from .channel import TxnPeers
from .coordinator import TOPIC, partition_for_key


def coordinator_of(transactional_id: str, metadata: ClusterMetadata) -> int | None:
    """The broker leading the id's ``__transaction_state`` partition (None before the topic exists)."""
    state_topic = metadata.topics.get(TOPIC)
    if state_topic is None:
        return None
    return state_topic.partitions[partition_for_key(transactional_id, len(state_topic.partitions))].leader


async def verify_write(part: Partition, header: BatchHeader, transactional_id: str, metadata: ClusterMetadata,
                       peers: TxnPeers) -> None:
    if header.producer_id in part.producers.open_transactions():
        return  # this transaction already wrote here: verified then
    coordinator = coordinator_of(transactional_id, metadata)
    if coordinator is None:
        return
    try:
        await peers.verify(coordinator, transactional_id, header.producer_id, header.producer_epoch, part.topic,
                           part.index)
    except KafkaError as e:
        raise as_write_error(e) from None


def implicit_adds(transaction_version: int, request_may_add: bool) -> bool:
    """Does a request add its partitions to the transaction itself (protocol v2)? Only a version that
    may (Produce v12+, TxnOffsetCommit v5+: ``request_may_add``) where the cluster finalizes
    ``transaction_version`` 2."""
    return request_may_add and transaction_version >= 2


async def add_write(part: Partition, header: BatchHeader, transactional_id: str, metadata: ClusterMetadata,
                    peers: TxnPeers) -> None:
    """Protocol v2: a transaction's first write to a partition adds the partition to it."""
    if header.producer_id in part.producers.open_transactions():
        return  # added at this transaction's first write here
    coordinator = coordinator_of(transactional_id, metadata)
    if coordinator is None:
        raise KafkaError(ErrorCode.coordinator_not_available)
    try:
        await peers.add_partition(coordinator, transactional_id, header.producer_id, header.producer_epoch,
                                  part.topic, part.index)
    except KafkaError as e:
        raise as_write_error(e) from None


async def add_offset_commit(transactional_id: str, producer_id: int, producer_epoch: int, group_id: str,
                            metadata: ClusterMetadata, peers: TxnPeers) -> None:
    """Protocol v2: TxnOffsetCommit adds the group's offsets partition, as AddOffsetsToTxn did."""
    coordinator = coordinator_of(transactional_id, metadata)
    if coordinator is None:
        raise KafkaError(ErrorCode.coordinator_not_available)
    await peers.add_offsets(coordinator, transactional_id, producer_id, producer_epoch, group_id)


def as_write_error(e: KafkaError) -> KafkaError:
    """The coordinator's answer as a Produce answer: a fenced producer is told INVALID_PRODUCER_EPOCH, as
    the verification path tells it; retriable answers (NOT_COORDINATOR, CONCURRENT_TRANSACTIONS) stay."""
    if e.code == ErrorCode.producer_fenced:
        return KafkaError(ErrorCode.invalid_producer_epoch, e.message)
    return e


async def verify_offset_commit(transactional_id: str, producer_id: int, producer_epoch: int, group_id: str,
                               metadata: ClusterMetadata, peers: TxnPeers) -> None:
    """TxnOffsetCommit: the group coordinator checks the producer with the transaction coordinator."""
    coordinator = coordinator_of(transactional_id, metadata)
    if coordinator is None:
        raise KafkaError(ErrorCode.invalid_producer_id_mapping)
    await peers.verify_offsets(coordinator, transactional_id, producer_id, producer_epoch, group_id)
