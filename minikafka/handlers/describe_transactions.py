"""DescribeTransactions (KIP-664): what the coordinator knows of each transactional id.

Kafka's ``kafka-transactions.sh describe`` and the admin clients' ``describe_transactions``
send it to the id's coordinator, which answers with the state, the producer id and epoch,
the timeout, when the open transaction started, and the partitions it has added. Under
transaction protocol v2 (KIP-890 part 2) the epoch it shows moves on with every transaction
that ends; under v1 only ``init_transactions`` moves it. Reading an id needs DESCRIBE on it.
"""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from . import _txn
from .ports import Caller, Response, TransactionView

_UTC = datetime.UTC


def state_name(meta: TransactionView) -> str:
    """Kafka's name of a state on the wire: PREPARE_COMMIT is ``PrepareCommit``."""
    return "".join(word.capitalize() for word in meta.state.name.split("_"))


def _described(caller: Caller, meta: TransactionView) -> Any:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(meta.partitions):
        by_topic.setdefault(topic, []).append(index)
    return caller.make("TransactionState", error_code=ErrorCode.none, transactional_id=meta.transactional_id,
                       transaction_state=state_name(meta),
                       transaction_timeout=datetime.timedelta(milliseconds=meta.timeout_ms),
                       transaction_start_time=datetime.datetime.fromtimestamp(meta.start_ms / 1000, _UTC),
                       producer_id=meta.producer_id, producer_epoch=meta.producer_epoch,
                       topics=tuple(caller.make("TopicData", topic=t, partitions=tuple(p))
                                    for t, p in by_topic.items()))


def _failed(caller: Caller, tid: str, code: ErrorCode) -> Any:
    return caller.make("TransactionState", error_code=code, transactional_id=tid, transaction_state="",
                       transaction_timeout=datetime.timedelta(0),
                       transaction_start_time=datetime.datetime.fromtimestamp(-0.001, _UTC),
                       producer_id=-1, producer_epoch=-1, topics=())


class DescribeTransactions(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: DescribeTransactionsRequest) -> Response:
        return caller.respond(transaction_states=tuple(self._one(caller, tid) for tid in request.transactional_ids))

    def _one(self, caller: Caller, tid: str) -> Any:
        if not caller.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid):
            return _failed(caller, tid, ErrorCode.transactional_id_authorization_failed)
        try:
            return _described(caller, self.transactions.describe_transaction(tid))
        except KafkaError as e:
            return _failed(caller, tid, e.code)
