"""AddPartitionsToTxn: a transactional producer names the partitions it will write to,
so the coordinator knows where to put the commit or abort markers.

v0-3 are the producer's: one transaction, and WRITE on each topic. v4+ (KIP-890) carry
several transactions and are what partition leaders send to verify a transactional
write (``verify_only``: is each partition already in the transaction?) or to add
partitions on a producer's behalf (Kafka asks CLUSTER_ACTION for them, a broker's right);
each transaction and partition gets its own answer.
"""

from __future__ import annotations

from . import _txn
from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import CLUSTER_NAME, Operation, ResourceType

API_KEY, BATCHED_SINCE = 24, 4


def upgrade(decoded, latest: type):
    """The producer's versions (v0-3) and the batched ones (v4+) have different fields."""
    if type(decoded).__version__ >= BATCHED_SINCE:
        return codec.upgrade(decoded, latest)
    return codec.upgrade(decoded, codec.request_class(API_KEY, BATCHED_SINCE - 1))


def _results(ctx, topics, code_of):
    return tuple(ctx.make("AddPartitionsToTxnTopicResult", name=t.name, results_by_partition=tuple(
        ctx.make("AddPartitionsToTxnPartitionResult", partition_index=p, partition_error_code=code_of(t.name, p))
        for p in t.partitions)) for t in topics)


def _respond(ctx, request, code_of):
    if ctx.api_version < BATCHED_SINCE:
        return ctx.respond(results_by_topic_v3_and_below=_results(ctx, request.v3_and_below_topics, code_of))
    return ctx.respond(error_code=ErrorCode.none, results_by_transaction=tuple(
        ctx.make("AddPartitionsToTxnResult", transactional_id=t.transactional_id,
                 topic_results=_results(ctx, t.topics, code_of)) for t in request.transactions))


def error_response(ctx, request, code: ErrorCode):
    """Every partition fails with ``code`` (an ACL refusal, an injected fault)."""
    return _respond(ctx, request, lambda topic, p: code)


async def _producer_request(ctx, request):
    topics = request.v3_and_below_topics
    denied = {t.name for t in topics if not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, t.name)}
    if denied:  # as Kafka: the denied topics say why, the others were not attempted
        return _respond(ctx, request, lambda topic, p: ErrorCode.topic_authorization_failed if topic in denied
                        else ErrorCode.operation_not_attempted)
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    try:
        await _txn.coordinator(ctx).add_partitions(request.v3_and_below_transactional_id,
                                                   request.v3_and_below_producer_id,
                                                   request.v3_and_below_producer_epoch, wanted)
        code = ErrorCode.none
    except KafkaError as e:
        code = _txn.code_for(ctx, "AddPartitionsToTxn", e)
    return _respond(ctx, request, lambda topic, p: code)


async def _transaction(ctx, t):
    coordinator, codes = _txn.coordinator(ctx), {}
    try:
        coordinator.verify_producer(t.transactional_id, t.producer_id, t.producer_epoch)
        if not t.verify_only:
            await coordinator.add_partitions(t.transactional_id, t.producer_id, t.producer_epoch,
                                             [(x.name, p) for x in t.topics for p in x.partitions])
        for x in t.topics:
            for p in x.partitions:
                try:
                    coordinator.verify(t.transactional_id, t.producer_id, t.producer_epoch, x.name, p)
                except KafkaError as e:
                    codes[x.name, p] = e.code
        failed = None
    except KafkaError as e:
        failed = e.code
    return ctx.make("AddPartitionsToTxnResult", transactional_id=t.transactional_id, topic_results=_results(
        ctx, t.topics, lambda topic, p: failed if failed is not None else codes.get((topic, p), ErrorCode.none)))


async def handle(ctx, request):
    if ctx.api_version < BATCHED_SINCE:
        return await _producer_request(ctx, request)
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return ctx.respond(error_code=ErrorCode.cluster_authorization_failed, results_by_transaction=())
    results = [await _transaction(ctx, t) for t in request.transactions]
    return ctx.respond(error_code=ErrorCode.none, results_by_transaction=tuple(results))
