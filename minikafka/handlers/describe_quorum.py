"""DescribeQuorum (KIP-595, KIP-853): the KRaft controller quorum, as minikafka has it.

Kafka keeps its metadata in a Raft log (``__cluster_metadata``) replicated by a quorum of
controllers; ``kafka-metadata-quorum.sh`` asks a broker for the quorum's leader, its
epoch, the log's high watermark and each voter's log end offset. minikafka's brokers run
like Kafka's combined mode (every broker may be the controller): the controller is the
lowest live broker id, its epoch is bumped by each change of controller, the log is
minikafka's metadata log (one record per change), and every broker that has joined is a
voter. The brokers share one process and one metadata object, so a live voter is always
caught up; a stopped one is as far as the log was when it stopped.
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.describe_quorum.v2.request import DescribeQuorumRequest

from ..errors import ErrorCode
from .ports import Caller, QuorumPort, Response

METADATA_TOPIC, METADATA_PARTITION = "__cluster_metadata", 0


def _valid(request: DescribeQuorumRequest) -> bool:
    topics = request.topics
    return (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC and len(topics[0].partitions) == 1
            and topics[0].partitions[0].partition_index == METADATA_PARTITION)


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    """A stable id for a voter's metadata directory (KIP-853), from the cluster and node ids."""
    return uuid.uuid5(uuid.NAMESPACE_OID, f"{cluster_id}/{node_id}")


class DescribeQuorum:
    """The DescribeQuorum API over the broker's ``QuorumPort``."""

    def __init__(self, quorum: QuorumPort) -> None:
        self.quorum = quorum

    async def handle(self, caller: Caller, request: DescribeQuorumRequest) -> Response:
        code = ErrorCode.none if _valid(request) else ErrorCode.unknown_topic_or_partition
        topics = tuple(caller.make("TopicData", topic_name=t.topic_name,
                                   partitions=tuple(self._partition(caller, code, p.partition_index)
                                                    for p in t.partitions))
                       for t in request.topics)
        nodes = self._nodes(caller) if caller.has("Node") else ()
        return caller.respond(error_code=ErrorCode.none, error_message=None, topics=topics, nodes=nodes)

    def _voter(self, caller: Caller, node_id: int, now: int) -> Any:
        quorum = self.quorum
        offset, seen = quorum.departed_voter(node_id) or (quorum.metadata_end_offset(), now)
        return caller.make("ReplicaState", replica_id=node_id,
                           replica_directory_id=directory_id(quorum.cluster_id(), node_id),
                           log_end_offset=offset, last_fetch_timestamp=seen, last_caught_up_timestamp=seen)

    def _partition(self, caller: Caller, code: ErrorCode, index: int) -> Any:
        quorum, now = self.quorum, self.quorum.clock_ms()
        voters = quorum.quorum_voters() if code == ErrorCode.none else []
        return caller.make("PartitionData", partition_index=index, error_code=code, error_message=None,
                           leader_id=quorum.controller_id() if voters else -1, leader_epoch=quorum.controller_epoch(),
                           high_watermark=quorum.metadata_end_offset() if voters else -1,
                           current_voters=tuple(self._voter(caller, v, now) for v in voters), observers=())

    def _nodes(self, caller: Caller) -> tuple[Any, ...]:
        return tuple(caller.make("Node", node_id=i, listeners=(caller.make("Listener", name="PLAINTEXT", host=h,
                                                                           port=p),))
                     for i, (h, p) in sorted(self.quorum.live_brokers().items()))
