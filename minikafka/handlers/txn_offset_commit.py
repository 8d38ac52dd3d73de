"""TxnOffsetCommit: offsets a consume-transform-produce transaction commits.

The group coordinator writes them to ``__consumer_offsets`` as transactional records of
the producer; they become the group's committed offsets only when the transaction's
COMMIT marker lands there, and vanish on ABORT. So the output records and the input
offsets are committed together, or not at all: exactly-once processing.

v5 on a cluster that finalizes ``transaction.version`` 2 is transaction protocol v2
(KIP-890 part 2): the request also adds the group's offsets partition to the
transaction, which older versions leave to AddOffsetsToTxn.
"""

from __future__ import annotations

from kio.schema.txn_offset_commit.v5.request import TxnOffsetCommitRequest

from ..clock import now_ms
from ..errors import ErrorCode, KafkaError
from ..groups.offsets import CommittedOffset
from ..security.acl import Operation, ResourceType
from ..transactions.verification import add_offset_commit, implicit_adds, verify_offset_commit
from . import _txn
from ._groups import coordinator
from .context import RequestContext, Response

ADDS_OFFSETS_SINCE = 5


async def _results(ctx: RequestContext, request: TxnOffsetCommitRequest,
                   commits: list[tuple[str, int, CommittedOffset]]) -> dict:
    broker = ctx.broker
    try:
        if implicit_adds(broker.config["transaction.version"], ctx.api_version, ADDS_OFFSETS_SINCE):
            # adding checks the producer with its coordinator, as the verification below does
            await add_offset_commit(request.transactional_id, request.producer_id, request.producer_epoch,
                                    request.group_id, broker.metadata, broker.peers)
        else:
            verify_offset_commit(request.transactional_id, request.producer_id, request.producer_epoch,
                                 broker.metadata, broker.peers)
        return await coordinator(ctx).commit_transactional(
            request.group_id, request.producer_id, request.producer_epoch, request.member_id,
            request.group_instance_id, request.generation_id, commits)
    except KafkaError as e:
        code = _txn.code_for(ctx, "TxnOffsetCommit", e)
        return {(t, p): code for t, p, _ in commits}


def _respond(ctx: RequestContext, request: TxnOffsetCommitRequest, results: dict) -> Response:
    topics = tuple(
        ctx.make("TxnOffsetCommitResponseTopic", name=t.name, partitions=tuple(
            ctx.make("TxnOffsetCommitResponsePartition", partition_index=p.partition_index,
                     error_code=results.get((t.name, p.partition_index), ErrorCode.none))
            for p in t.partitions))
        for t in request.topics)
    return ctx.respond(topics=topics)


def error_response(ctx: RequestContext, request: TxnOffsetCommitRequest, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (an ACL refusal, an injected fault)."""
    return _respond(ctx, request, {(t.name, p.partition_index): code for t in request.topics for p in t.partitions})


async def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> Response:
    stamp = now_ms()
    commits: list[tuple[str, int, CommittedOffset]] = [
        (t.name, p.partition_index,
         CommittedOffset(p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", stamp))
        for t in request.topics for p in t.partitions]
    denied = {(t, p): ErrorCode.topic_authorization_failed for t, p, _ in commits
              if not ctx.allowed(Operation.READ, ResourceType.TOPIC, t)}
    allowed = [c for c in commits if (c[0], c[1]) not in denied]
    results = await _results(ctx, request, allowed) if allowed else {}
    return _respond(ctx, request, {**results, **denied})
