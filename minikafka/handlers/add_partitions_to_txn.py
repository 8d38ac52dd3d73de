"""AddPartitionsToTxn: a transactional producer names the partitions it will write to,
so the coordinator knows where to put the commit or abort markers."""

from __future__ import annotations

from . import _txn
from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType


def _respond(ctx, request, code_of):
    results = tuple(
        ctx.make("AddPartitionsToTxnTopicResult", name=t.name, results_by_partition=tuple(
            ctx.make("AddPartitionsToTxnPartitionResult", partition_index=p, partition_error_code=code_of(t.name))
            for p in t.partitions))
        for t in request.v3_and_below_topics)
    return ctx.respond(results_by_topic_v3_and_below=results)


def error_response(ctx, request, code: ErrorCode):
    """Every partition fails with ``code`` (an ACL refusal, an injected fault)."""
    return _respond(ctx, request, lambda topic: code)


async def handle(ctx, request):
    topics = request.v3_and_below_topics
    denied = {t.name for t in topics if not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, t.name)}
    if denied:  # as Kafka: the denied topics say why, the others were not attempted
        return _respond(ctx, request, lambda topic: ErrorCode.topic_authorization_failed if topic in denied
                        else ErrorCode.operation_not_attempted)
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    try:
        await _txn.coordinator(ctx).add_partitions(request.v3_and_below_transactional_id,
                                                   request.v3_and_below_producer_id,
                                                   request.v3_and_below_producer_epoch, wanted)
        code = ErrorCode.none
    except KafkaError as e:
        code = _txn.code_for(ctx, "AddPartitionsToTxn", e)
    return _respond(ctx, request, lambda topic: code)
