"""ElectLeaders (KIP-183, KIP-460): ask the controller for a preferred or an unclean election.

PREFERRED moves leadership back to each partition's first replica when it is alive and
in sync (what ``kafka-leader-election.sh --election-type PREFERRED`` does after a broker
returns); UNCLEAN gives a leaderless partition a leader, from the ISR if one is alive, else
from any live replica, accepting the loss of what only the old leader had. Each partition
gets its own answer: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
ELIGIBLE_LEADERS_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION. A null topic list means
every partition, and then, as in Kafka, partitions that needed no election are left out.
"""

from __future__ import annotations

from typing import Any

from kio.schema.elect_leaders.v2.request import ElectLeadersRequest

from ..errors import ErrorCode, KafkaError
from .context import RequestContext, Response

PREFERRED, UNCLEAN = 0, 1


def _elect(ctx: RequestContext, topic: str, index: int, unclean: bool) -> tuple[ErrorCode, str | None]:
    info = ctx.broker.metadata.topics.get(topic)
    try:
        if info is None or not 0 <= index < len(info.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{index} does not exist.")
        ctx.broker.controller.requested_election(topic, info.partitions[index], unclean)
        return ErrorCode.none, None
    except KafkaError as e:
        return e.code, e.message


def _requested(ctx: RequestContext, request: ElectLeadersRequest) -> list[tuple[str, list[int]]]:
    if request.topic_partitions is None:
        return [(t.name, [p.index for p in t.partitions]) for t in ctx.broker.metadata.topics.values()]
    return [(t.topic, list(dict.fromkeys(t.partitions))) for t in request.topic_partitions]


def _topic_result(ctx: RequestContext, topic: str, indexes: list[int], unclean: bool,
                  skip_not_needed: bool) -> Any:
    results = [(i, *_elect(ctx, topic, i, unclean)) for i in indexes]
    partitions = tuple(ctx.make("PartitionResult", partition_id=i, error_code=code, error_message=message)
                       for i, code, message in results
                       if not (skip_not_needed and code == ErrorCode.election_not_needed))
    return ctx.make("ReplicaElectionResult", topic=topic, partition_result=partitions) if partitions else None


async def handle(ctx: RequestContext, request: ElectLeadersRequest) -> Response:
    if request.election_type not in (PREFERRED, UNCLEAN):
        return ctx.respond(error_code=ErrorCode.invalid_request, replica_election_results=())
    unclean, every = request.election_type == UNCLEAN, request.topic_partitions is None
    results = (_topic_result(ctx, topic, indexes, unclean, every) for topic, indexes in _requested(ctx, request))
    return ctx.respond(error_code=ErrorCode.none, replica_election_results=tuple(r for r in results if r))
