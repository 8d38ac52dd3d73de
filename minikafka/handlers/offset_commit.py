"""OffsetCommit: a consumer records how far it has processed, per partition.

The coordinator checks that the commit comes from a member of the current generation
(or, with generation -1, that the group is empty: tools and manually assigned
consumers), writes one record per partition to ``__consumer_offsets`` and answers once
the write is replicated. A group-level error (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS, NOT_COORDINATOR...) is reported on every partition. v2-4 carry
a retention time, which Kafka ignores since 2.1 (``offsets.retention.minutes`` rules).
From v9 the generation is a member epoch for members of a consumer-protocol group
(KIP-848): a commit at another epoch than the member's gets STALE_MEMBER_EPOCH.
"""

from __future__ import annotations

from kio.schema.offset_commit.v9.request import OffsetCommitRequest

from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..groups.offsets import CommittedOffset
from ..security.acl import Operation, ResourceType
from ._groups import coordinator
from .context import RequestContext, Response

READ, TOPIC = Operation.READ, ResourceType.TOPIC


def _commits(request: OffsetCommitRequest) -> list[tuple[str, int, CommittedOffset]]:
    stamp = now_ms()
    return [(t.name, p.partition_index,
             CommittedOffset(p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", stamp))
            for t in request.topics for p in t.partitions]


async def _results(ctx: RequestContext, request: OffsetCommitRequest,
                   commits: list[tuple[str, int, CommittedOffset]]) -> dict:
    try:
        return await coordinator(ctx).commit(
            request.group_id, request.member_id, request.group_instance_id,
            request.generation_id_or_member_epoch, commits, ctx.api_version)
    except KafkaError as e:
        return {(t, p): e.code for t, p, _ in commits}


def _respond(ctx: RequestContext, request: OffsetCommitRequest, results: dict) -> Response:
    topics = tuple(
        ctx.make("OffsetCommitResponseTopic", name=t.name, partitions=tuple(
            ctx.make("OffsetCommitResponsePartition", partition_index=p.partition_index,
                     error_code=results[(t.name, p.partition_index)])
            for p in t.partitions))
        for t in request.topics)
    return ctx.respond(topics=topics)


def error_response(ctx: RequestContext, request: OffsetCommitRequest, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (GROUP_AUTHORIZATION_FAILED, an injected fault)."""
    return _respond(ctx, request, {(t.name, p.partition_index): code for t in request.topics for p in t.partitions})


async def handle(ctx: RequestContext, request: OffsetCommitRequest) -> Response:
    commits = _commits(request)
    denied = {(t, p): ErrorCode.topic_authorization_failed for t, p, _ in commits if not ctx.allowed(READ, TOPIC, t)}
    allowed = [c for c in commits if (c[0], c[1]) not in denied]  # Kafka commits those, answers the rest
    results = await _results(ctx, request, allowed) if allowed else {}
    return _respond(ctx, request, {**results, **denied})
