"""What the transaction handlers share: finding the coordinator, and the fencing error
each API version understands (PRODUCER_FENCED arrived with KIP-588; older versions
get INVALID_PRODUCER_EPOCH)."""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ..transactions.coordinator import TransactionCoordinator
from .context import RequestContext

# The first version of each API that may answer PRODUCER_FENCED.
FENCED_SINCE = {"InitProducerId": 3, "AddPartitionsToTxn": 2, "AddOffsetsToTxn": 2, "EndTxn": 2, "TxnOffsetCommit": 3}


def coordinator(ctx: RequestContext) -> TransactionCoordinator:
    return ctx.broker.transactions


def code_for(ctx: RequestContext, api: str, e: KafkaError) -> ErrorCode:
    if e.code == ErrorCode.producer_fenced and ctx.api_version < FENCED_SINCE[api]:
        return ErrorCode.invalid_producer_epoch
    return e.code
