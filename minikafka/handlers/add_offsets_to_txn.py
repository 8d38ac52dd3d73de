"""AddOffsetsToTxn: the transaction will also commit a consumer group's offsets
(consume-transform-produce); the group's ``__consumer_offsets`` partition joins it."""

from __future__ import annotations

from kio.schema.add_offsets_to_txn.v4.request import AddOffsetsToTxnRequest

from ..errors import ErrorCode, KafkaError
from . import _txn
from .ports import Caller, Response



class AddOffsetsToTxn(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: AddOffsetsToTxnRequest) -> Response:
        try:
            await self.transactions.add_offsets_to_transaction(request.transactional_id, request.producer_id,
                                                               request.producer_epoch, request.group_id)
            code = ErrorCode.none
        except KafkaError as e:
            code = _txn.code_for(caller, "AddOffsetsToTxn", e)
        return caller.respond(error_code=code)
