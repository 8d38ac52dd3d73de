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

from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..groups.offsets import CommittedOffset
from ..security.acl import Operation, ResourceType
from ._groups import coordinator
from ._topic_ids import absent, name_of, upgrade_within
from .context import RequestContext, Response

READ, TOPIC = Operation.READ, ResourceType.TOPIC
TOPIC_IDS_SINCE = 10
upgrade = upgrade_within(8, TOPIC_IDS_SINCE)  # v2-v9 read as v9 (names), v10 as itself (ids)
Request = OffsetCommitRequest | NamedOffsetCommitRequest


def _name(ctx: RequestContext, topic: Any) -> str | None:
    """The topic's name: given up to v9, looked up by id from v10 (None: an unknown id)."""
    if ctx.api_version < TOPIC_IDS_SINCE:
        return str(topic.name)
    return None if absent(topic.topic_id) else name_of(ctx, topic.topic_id)


def _commits(ctx: RequestContext, request: Request) -> list[tuple[str, int, CommittedOffset]]:
    stamp = now_ms()
    return [(name, p.partition_index,
             CommittedOffset(p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", stamp))
            for t in request.topics if (name := _name(ctx, t)) is not None for p in t.partitions]


async def _results(ctx: RequestContext, request: Request,
                   commits: list[tuple[str, int, CommittedOffset]]) -> dict:
    try:
        return await coordinator(ctx).commit(
            request.group_id, request.member_id, request.group_instance_id,
            request.generation_id_or_member_epoch, commits, ctx.api_version)
    except KafkaError as e:
        return {(t, p): e.code for t, p, _ in commits}


def _respond(ctx: RequestContext, request: Request, results: dict) -> Response:
    """One answer per topic asked, named as asked (name up to v9, id from v10)."""
    def code(name: str | None, index: int) -> ErrorCode:
        return ErrorCode.unknown_topic_id if name is None else results[(name, index)]

    topics = tuple(
        ctx.make("OffsetCommitResponseTopic", name=getattr(t, "name", ""), topic_id=getattr(t, "topic_id", None),
                 partitions=tuple(
                     ctx.make("OffsetCommitResponsePartition", partition_index=p.partition_index,
                              error_code=code(name, p.partition_index))
                     for p in t.partitions))
        for t in request.topics for name in (_name(ctx, t),))
    return ctx.respond(topics=topics)


def error_response(ctx: RequestContext, request: Request, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (GROUP_AUTHORIZATION_FAILED, an injected fault)."""
    return _respond(ctx, request, {(t, p): code for t, p, _ in _commits(ctx, request)})


async def handle(ctx: RequestContext, request: Request) -> Response:
    commits = _commits(ctx, request)
    denied = {(t, p): ErrorCode.topic_authorization_failed for t, p, _ in commits if not ctx.allowed(READ, TOPIC, t)}
    allowed = [c for c in commits if (c[0], c[1]) not in denied]  # Kafka commits those, answers the rest
    results = await _results(ctx, request, allowed) if allowed else {}
    return _respond(ctx, request, {**results, **denied})
