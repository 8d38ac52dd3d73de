"""What a broker process asks the active controller on its own behalf: ISR changes and topics.

- ``QuorumIsrChannel`` is the broker's ``replica.isr.IsrChannel`` over TCP: a partition
  leader's new ISR goes to the active controller as AlterPartition (KIP-497), with the leader
  epoch and partition epoch it knows. An accepted change is applied to the local partition
  at once (the leader counts on it for ``acks=all``); the metadata log brings the same state
  a moment later.
- ``create_topic_request`` is the CreateTopics a broker sends for a topic it creates itself
  (``__consumer_offsets`` on a group's first FindCoordinator, a topic auto-created by a
  Metadata request), as a Kafka 4 broker does.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from typing import Any

from ..errors import ErrorCode, KafkaError
from ..metadata import ClusterMetadata, PartitionInfo
from ..protocol import codec
from .quorum_client import NoController, QuorumClient

ALTER_PARTITION, CREATE_TOPICS = 56, 19


def update_in_place(old: PartitionInfo, new: PartitionInfo) -> None:
    """Copy ``new``'s state into ``old``: a broker's replicas hold the metadata's PartitionInfo
    object itself, so a change must land in that object, not in a new one."""
    for f in dataclasses.fields(PartitionInfo):
        setattr(old, f.name, getattr(new, f.name))


class QuorumIsrChannel:
    def __init__(self, node_id: int, quorum: QuorumClient, metadata: ClusterMetadata, broker_epoch: Any):
        self.node_id, self.quorum, self.metadata = node_id, quorum, metadata
        self.broker_epoch = broker_epoch  # () -> this broker's current epoch

    async def alter_partition(self, topic: str, index: int, leader_epoch: int, new_isr: list[int]) -> PartitionInfo:
        found = self.metadata.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        info = found.partitions[index]
        version = 2 if await self.quorum.serves(ALTER_PARTITION, 2) else 3
        if not await self.quorum.serves(ALTER_PARTITION, version):
            raise KafkaError(ErrorCode.unsupported_version, "The active controller does not serve AlterPartition.")
        module = codec.request_module(ALTER_PARTITION, version)
        if version == 2:
            isr: dict[str, Any] = {"new_isr": tuple(new_isr)}
        else:
            isr = {"new_isr_with_epochs": tuple(codec.entity(module, "BrokerState", broker_id=b, broker_epoch=-1)
                                                for b in new_isr)}
        partition = codec.entity(module, "PartitionData", partition_index=index, leader_epoch=leader_epoch,
                                 leader_recovery_state=0, partition_epoch=info.partition_epoch, **isr)
        request = codec.make(codec.request_class(ALTER_PARTITION, version), broker_id=self.node_id,
                             broker_epoch=self.broker_epoch(),
                             topics=(codec.entity(module, "TopicData", topic_id=uuid.UUID(found.topic_id),
                                                  partitions=(partition,)),))
        try:
            answer = await self.quorum.call(request)
        except NoController as e:
            raise OSError(str(e)) from None
        if answer.error_code != ErrorCode.none:
            raise KafkaError(ErrorCode(answer.error_code), "AlterPartition was refused as a whole.")
        got = answer.topics[0].partitions[0]
        if got.error_code != ErrorCode.none:
            raise KafkaError(ErrorCode(got.error_code))
        if got.leader_epoch > leader_epoch:
            # accepted, and the leadership moved at once (a returning preferred leader): this broker
            # must not count on the answer's ISR as its own; it follows once the metadata arrives, and
            # until then the followers it asked for still count for its high watermark
            raise KafkaError(ErrorCode.not_leader_or_follower,
                             f"The controller accepted the ISR of {topic}-{index} and made broker {got.leader_id} "
                             f"its leader at epoch {got.leader_epoch}.")
        if got.leader_epoch == info.leader_epoch and got.partition_epoch > info.partition_epoch:
            changed = dataclasses.replace(info, isr=list(got.isr), partition_epoch=got.partition_epoch)
            update_in_place(info, changed)
        return info


def create_topic_request(name: str, partitions: int, replication_factor: int, configs: dict[str, object]) -> Any:
    version = 7
    module = codec.request_module(CREATE_TOPICS, version)
    topic = codec.entity(module, "CreatableTopic", name=name, num_partitions=partitions,
                         replication_factor=replication_factor, assignments=(),
                         configs=tuple(codec.entity(module, "CreatableTopicConfig", name=k, value=str(v))
                                       for k, v in configs.items()))
    return codec.make(codec.request_class(CREATE_TOPICS, version), topics=(topic,),
                      timeout=datetime.timedelta(seconds=30), validate_only=False)
