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
from .ports import Caller, ReassignmentPort, Response

PREFERRED, UNCLEAN = 0, 1


def error_response(caller: Caller, request: ElectLeadersRequest, code: ErrorCode) -> Response:
    """Every named partition refused with ``code`` (and the request, where the version has a top-level
    error): the fault API, or a broker process that could not forward it."""
    results = tuple(caller.make("ReplicaElectionResult", topic=t.topic, partition_result=tuple(
        caller.make("PartitionResult", partition_id=p, error_code=code, error_message=code.name) for p in t.partitions))
        for t in request.topic_partitions or ())
    return caller.respond(error_code=code, replica_election_results=results)


class ElectLeaders:
    """The ElectLeaders API over the broker's ``ReassignmentPort`` (the controller's elections)."""

    def __init__(self, controller: ReassignmentPort) -> None:
        self.controller = controller

    async def handle(self, caller: Caller, request: ElectLeadersRequest) -> Response:
        if request.election_type not in (PREFERRED, UNCLEAN):
            return caller.respond(error_code=ErrorCode.invalid_request, replica_election_results=())
        unclean, every = request.election_type == UNCLEAN, request.topic_partitions is None
        results = (self._topic_result(caller, topic, indexes, unclean, every)
                   for topic, indexes in self._requested(request))
        return caller.respond(error_code=ErrorCode.none, replica_election_results=tuple(r for r in results if r))

    def _elect(self, topic: str, index: int, unclean: bool) -> tuple[ErrorCode, str | None]:
        try:
            self.controller.elect_leader(topic, index, unclean)
            return ErrorCode.none, None
        except KafkaError as e:
            return e.code, e.message

    def _requested(self, request: ElectLeadersRequest) -> list[tuple[str, list[int]]]:
        if request.topic_partitions is None:
            return [(t.name, [p.index for p in t.partitions]) for t in self.controller.topics().values()]
        return [(t.topic, list(dict.fromkeys(t.partitions))) for t in request.topic_partitions]

    def _topic_result(self, caller: Caller, topic: str, indexes: list[int], unclean: bool,
                      skip_not_needed: bool) -> Any:
        results = [(i, *self._elect(topic, i, unclean)) for i in indexes]
        partitions = tuple(caller.make("PartitionResult", partition_id=i, error_code=code, error_message=message)
                           for i, code, message in results
                           if not (skip_not_needed and code == ErrorCode.election_not_needed))
        return caller.make("ReplicaElectionResult", topic=topic, partition_result=partitions) if partitions else None
