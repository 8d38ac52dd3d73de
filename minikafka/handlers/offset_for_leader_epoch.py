"""OffsetForLeaderEpoch: where a leader epoch ended in a partition's log (KIP-101, KIP-320).

For each partition the leader answers with the largest epoch it knows up to the one asked
for and the offset where that epoch ended (its log end offset for the current epoch), the
same answer the Fetch handler puts in DivergingEpoch for a follower (``replica.fetcher.epoch_end``).
A consumer asks it after a leader change to check that its position was not truncated
away; a broker (``replica_id`` >= 0, v3+) asks it as a follower and needs CLUSTER_ACTION.
CurrentLeaderEpoch (v2+) is checked: FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH. An epoch
older than every epoch the log knows is answered with -1 and offset -1, as Kafka does.
"""

from __future__ import annotations

from typing import Any

from kio.schema.offset_for_leader_epoch.v4.request import OffsetForLeaderEpochRequest, OffsetForLeaderPartition

from ..errors import ErrorCode, KafkaError
from ..replica.fetcher import check_leader_epoch, epoch_end
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from .context import RequestContext, Response


def _answer(ctx: RequestContext, topic: str, p: OffsetForLeaderPartition, broker_allowed: bool) -> Any:
    epoch, end = -1, -1
    try:
        if not broker_allowed or not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
            raise KafkaError(ErrorCode.topic_authorization_failed)
        part = ctx.broker.local_replica(topic, p.partition)
        if part is None:
            part = ctx.broker.leader_replica(topic, p.partition)  # raises Kafka's error for this partition
        check_leader_epoch(part, p.current_leader_epoch)
        if not part.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower,
                             f"Broker {ctx.broker.node_id} does not lead {topic}-{p.partition}.")
        epoch, end = epoch_end(part, p.leader_epoch)
        if epoch < 0:
            end = -1
        code = ErrorCode.none
    except KafkaError as e:
        code = e.code
    return ctx.make("EpochEndOffset", error_code=code, partition=p.partition, leader_epoch=epoch, end_offset=end)


async def handle(ctx: RequestContext, request: OffsetForLeaderEpochRequest) -> Response:
    from_broker = request.replica_id >= 0
    broker_allowed = not from_broker or ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    topics = tuple(ctx.make("OffsetForLeaderTopicResult", topic=t.topic,
                            partitions=tuple(_answer(ctx, t.topic, p, broker_allowed) for p in t.partitions))
                   for t in request.topics)
    return ctx.respond(topics=topics)
