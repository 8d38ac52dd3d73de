"""What the transaction handlers share: the fencing error each API version understands
(PRODUCER_FENCED arrived with KIP-588; older versions get INVALID_PRODUCER_EPOCH), and the
base of their handler objects, which hold the broker's ``TransactionsPort``."""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from .ports import Caller, TransactionsPort

# The first version of each API that may answer PRODUCER_FENCED.
FENCED_SINCE = {"InitProducerId": 3, "AddPartitionsToTxn": 2, "AddOffsetsToTxn": 2, "EndTxn": 2, "TxnOffsetCommit": 3}


def code_for(caller: Caller, api: str, e: KafkaError) -> ErrorCode:
    if e.code == ErrorCode.producer_fenced and caller.api_version < FENCED_SINCE[api]:
        return ErrorCode.invalid_producer_epoch
    return e.code


class TxnHandler:
    """A transaction API's handler, constructed by the registry with the broker's transactions port."""

    def __init__(self, transactions: TransactionsPort) -> None:
        self.transactions = transactions
