"""AddPartitionsToTxn: a transactional producer names the partitions it will write to,
so the coordinator knows where to put the commit or abort markers."""

from __future__ import annotations

from . import _txn
from ..errors import ErrorCode, KafkaError


async def handle(ctx, request):
    topics = request.v3_and_below_topics
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    try:
        await _txn.coordinator(ctx).add_partitions(request.v3_and_below_transactional_id,
                                                   request.v3_and_below_producer_id,
                                             request.v3_and_below_producer_epoch, wanted)
        code = ErrorCode.none
    except KafkaError as e:
        code = _txn.code_for(ctx, "AddPartitionsToTxn", e)
    results = tuple(
        ctx.make("AddPartitionsToTxnTopicResult", name=t.name, results_by_partition=tuple(
            ctx.make("AddPartitionsToTxnPartitionResult", partition_index=p, partition_error_code=code)
            for p in t.partitions))
        for t in topics)
    return ctx.respond(results_by_topic_v3_and_below=results)
