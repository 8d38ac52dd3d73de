"""AddPartitionsToTxn: a transactional producer names the partitions it will write to,
so the coordinator knows where to put the commit or abort markers.

v0-3 are the producer's: one transaction, and WRITE on each topic. v4+ (KIP-890) carry
several transactions and are what partition leaders send to verify a transactional
write (``verify_only``: is each partition already in the transaction?) or to add
partitions on a producer's behalf (Kafka asks CLUSTER_ACTION for them, a broker's right);
each transaction and partition gets its own answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kio.schema.add_partitions_to_txn.v3.request import AddPartitionsToTxnRequest as ProducerRequest
from kio.schema.add_partitions_to_txn.v3.request import AddPartitionsToTxnTopic as ProducerTopic
from kio.schema.add_partitions_to_txn.v5.request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)

from ..errors import ErrorCode, KafkaError
from ..protocol import codec
from ..security.acl import CLUSTER_NAME, Operation, ResourceType
from . import _txn
from .ports import Caller, Response

API_KEY, BATCHED_SINCE = 24, 4
Request = AddPartitionsToTxnRequest | ProducerRequest  # v4+ as the newest, v0-3 as v3 (``upgrade``)
CodeOf = Callable[[str, int], ErrorCode]  # (topic, partition) -> its error


def upgrade(decoded: Any, latest: type) -> Any:
    """The producer's versions (v0-3) and the batched ones (v4+) have different fields."""
    if type(decoded).__version__ >= BATCHED_SINCE:
        return codec.upgrade(decoded, latest)
    return codec.upgrade(decoded, codec.request_class(API_KEY, BATCHED_SINCE - 1))


def _results(caller: Caller, topics: Iterable[AddPartitionsToTxnTopic | ProducerTopic],
             code_of: CodeOf) -> tuple[Any, ...]:
    return tuple(caller.make("AddPartitionsToTxnTopicResult", name=t.name, results_by_partition=tuple(
        caller.make("AddPartitionsToTxnPartitionResult", partition_index=p, partition_error_code=code_of(t.name, p))
        for p in t.partitions)) for t in topics)


def _respond(caller: Caller, request: Request, code_of: CodeOf) -> Response:
    if isinstance(request, ProducerRequest):  # v0-3 (``upgrade``)
        return caller.respond(results_by_topic_v3_and_below=_results(caller, request.v3_and_below_topics, code_of))
    return caller.respond(error_code=ErrorCode.none, results_by_transaction=tuple(
        caller.make("AddPartitionsToTxnResult", transactional_id=t.transactional_id,
                    topic_results=_results(caller, t.topics, code_of)) for t in request.transactions))


def error_response(caller: Caller, request: Request, code: ErrorCode) -> Response:
    """Every partition fails with ``code`` (an ACL refusal, an injected fault)."""
    return _respond(caller, request, lambda topic, p: code)


class AddPartitionsToTxn(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: Request) -> Response:
        if isinstance(request, ProducerRequest):  # v0-3 (``upgrade``)
            return await self._producer_request(caller, request)
        if not caller.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
            return caller.respond(error_code=ErrorCode.cluster_authorization_failed, results_by_transaction=())
        results = [await self._transaction(caller, t) for t in request.transactions]
        return caller.respond(error_code=ErrorCode.none, results_by_transaction=tuple(results))

    async def _producer_request(self, caller: Caller, request: ProducerRequest) -> Response:
        topics = request.v3_and_below_topics
        denied = {t.name for t in topics if not caller.allowed(Operation.WRITE, ResourceType.TOPIC, t.name)}
        if denied:  # as Kafka: the denied topics say why, the others were not attempted
            return _respond(caller, request, lambda topic, p: ErrorCode.topic_authorization_failed if topic in denied
                            else ErrorCode.operation_not_attempted)
        wanted: list[tuple[str, int]] = [(t.name, p) for t in topics for p in t.partitions]
        try:
            await self.transactions.add_partitions_to_transaction(request.v3_and_below_transactional_id,
                                                                  request.v3_and_below_producer_id,
                                                                  request.v3_and_below_producer_epoch, wanted)
            code = ErrorCode.none
        except KafkaError as e:
            code = _txn.code_for(caller, "AddPartitionsToTxn", e)
        return _respond(caller, request, lambda topic, p: code)

    async def _transaction(self, caller: Caller, t: AddPartitionsToTxnTransaction) -> Any:
        port, codes = self.transactions, dict[tuple[str, int], ErrorCode]()
        try:
            port.verify_transaction_producer(t.transactional_id, t.producer_id, t.producer_epoch)
            if not t.verify_only:
                added: list[tuple[str, int]] = [(x.name, p) for x in t.topics for p in x.partitions]
                await port.add_partitions_to_transaction(t.transactional_id, t.producer_id, t.producer_epoch, added)
            for x in t.topics:
                for p in x.partitions:
                    try:
                        port.verify_transaction(t.transactional_id, t.producer_id, t.producer_epoch, x.name, p)
                    except KafkaError as e:
                        codes[x.name, p] = e.code
            failed = None
        except KafkaError as e:
            failed = e.code
        return caller.make("AddPartitionsToTxnResult", transactional_id=t.transactional_id, topic_results=_results(
            caller, t.topics, lambda topic, p: failed if failed is not None else codes.get((topic, p), ErrorCode.none)))
