"""OffsetCommit: a consumer records how far it has processed, per partition.

The coordinator checks that the commit comes from a member of the current generation
(or, with generation -1, that the group is empty: tools and manually assigned
consumers), writes one record per partition to ``__consumer_offsets`` and answers once
the write is replicated. A group-level error (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS, NOT_COORDINATOR...) is reported on every partition. v2-4 carry
a retention time, which Kafka ignores since 2.1 (``offsets.retention.minutes`` rules).
From v9 the generation is a member epoch for members of a consumer-protocol group
(KIP-848): a commit at another epoch than the member's gets STALE_MEMBER_EPOCH.
v10 (Kafka 4.2, KIP-848's topic ids) names each topic by its id instead of its name, in
the request and the answer; an id the cluster does not know is answered with
UNKNOWN_TOPIC_ID on each of its partitions and nothing is committed for it.
"""

from __future__ import annotations

from typing import Any

from kio.schema.offset_commit.v9.request import OffsetCommitRequest as NamedOffsetCommitRequest
from kio.schema.offset_commit.v10.request import OffsetCommitRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from ._groups import GroupHandler
from ._ids import given, upgrade_within
from .ports import Caller, Response, TxnOffset

READ, TOPIC = Operation.READ, ResourceType.TOPIC
TOPIC_IDS_SINCE = 10
upgrade = upgrade_within(8, TOPIC_IDS_SINCE)  # v2-v9 read as v9 (names), v10 as itself (ids)
Request = OffsetCommitRequest | NamedOffsetCommitRequest
Results = dict[tuple[str, int], ErrorCode]


def _topics(request: Request) -> tuple[Any, ...]:
    """The request's topics, named (up to v9) or by id (v10)."""
    return tuple(request.topics)


def _respond(caller: Caller, request: Request, names: list[str | None], results: Results) -> Response:
    """One answer per topic asked, named as asked (name up to v9, id from v10); ``names``: each topic's
    name, None for an id the cluster does not know (UNKNOWN_TOPIC_ID)."""
    def code(name: str | None, index: int) -> ErrorCode:
        return ErrorCode.unknown_topic_id if name is None else results[(name, index)]

    topics = tuple(
        caller.make("OffsetCommitResponseTopic", name=getattr(t, "name", ""), topic_id=getattr(t, "topic_id", None),
                    partitions=tuple(
                        caller.make("OffsetCommitResponsePartition", partition_index=p.partition_index,
                                    error_code=code(name, p.partition_index))
                        for p in t.partitions))
        for t, name in zip(_topics(request), names))
    return caller.respond(topics=topics)


def error_response(caller: Caller, request: Request, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (GROUP_AUTHORIZATION_FAILED, an injected fault), as Kafka's
    error answer: a v10 topic id is not looked up first."""
    names: list[str | None] = [str(getattr(t, "name", "") or getattr(t, "topic_id", "")) for t in request.topics]
    return _respond(caller, request, names,
                    {(str(n), p.partition_index): code for t, n in zip(_topics(request), names) for p in t.partitions})


class OffsetCommit(GroupHandler):
    async def handle(self, caller: Caller, request: Request) -> Response:
        names = [self._name(caller, t) for t in request.topics]
        commits: list[TxnOffset] = [
            (name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "")
            for t, name in zip(_topics(request), names) if name is not None for p in t.partitions]
        denied = {(t, p): ErrorCode.topic_authorization_failed for t, p, *_ in commits
                  if not caller.allowed(READ, TOPIC, t)}
        allowed = [c for c in commits if (c[0], c[1]) not in denied]  # Kafka commits those, answers the rest
        results = await self._results(caller, request, allowed) if allowed else {}
        return _respond(caller, request, names, {**results, **denied})

    def _name(self, caller: Caller, topic: Any) -> str | None:
        """The topic's name: given up to v9, looked up by id from v10 (None: an unknown id)."""
        if caller.api_version < TOPIC_IDS_SINCE:
            return str(topic.name)
        topic_id = given(topic.topic_id)
        return None if topic_id is None else self.groups.topic_name_of(str(topic_id))

    async def _results(self, caller: Caller, request: Request, commits: list[TxnOffset]) -> Results:
        try:
            return await self.groups.commit_offsets(
                request.group_id, request.member_id, request.group_instance_id,
                request.generation_id_or_member_epoch, commits, caller.api_version)
        except KafkaError as e:
            return {(t, p): e.code for t, p, *_ in commits}
