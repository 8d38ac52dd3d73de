"""OffsetForLeaderEpoch: where a leader epoch ended in a partition's log (KIP-101, KIP-320).

For each partition the leader answers with the largest epoch it knows up to the one asked
for and the offset where that epoch ended (its log end offset for the current epoch), the
same answer the Fetch handler puts in DivergingEpoch for a follower (``replica.fetcher.epoch_end``).
A consumer asks it after a leader change to check that its position was not truncated
away; a broker (``replica_id`` >= 0, v3+) asks it as a follower and needs CLUSTER_ACTION.
CurrentLeaderEpoch (v2+) is checked: FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH. An epoch
older than every epoch the log knows is answered with -1 and offset -1, as Kafka does.
The handler sees only ``ports.EpochsPort``.
"""

from __future__ import annotations

from typing import Any

from kio.schema.offset_for_leader_epoch.v4.request import OffsetForLeaderEpochRequest, OffsetForLeaderPartition

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from .ports import Caller, EpochsPort, Response


class OffsetForLeaderEpoch:
    def __init__(self, port: EpochsPort) -> None:
        self.port = port

    def _answer(self, caller: Caller, topic: str, p: OffsetForLeaderPartition, broker_allowed: bool) -> Any:
        epoch, end = -1, -1
        try:
            if not broker_allowed or not caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
                raise KafkaError(ErrorCode.topic_authorization_failed)
            epoch, end = self.port.epoch_end_offset(topic, p.partition, p.current_leader_epoch, p.leader_epoch)
            code = ErrorCode.none
        except KafkaError as e:
            code = e.code
        return caller.make("EpochEndOffset", error_code=code, partition=p.partition, leader_epoch=epoch,
                           end_offset=end)

    async def handle(self, caller: Caller, request: OffsetForLeaderEpochRequest) -> Response:
        from_broker = request.replica_id >= 0
        broker_allowed = not from_broker or caller.allowed_cluster(Operation.CLUSTER_ACTION)
        topics = tuple(caller.make("OffsetForLeaderTopicResult", topic=t.topic, partitions=tuple(
            self._answer(caller, t.topic, p, broker_allowed) for p in t.partitions)) for t in request.topics)
        return caller.respond(topics=topics)
