"""InitProducerId: hand out a producer id and epoch (KIP-98).

An idempotent producer (kafka-python's and librdkafka's default nowadays) asks once
and then numbers its batches per partition. A transactional producer passes its
``transactional.id`` and is answered by the transaction coordinator, which bumps the
epoch to fence any older instance.
"""

from __future__ import annotations

from kio.schema.init_producer_id.v5.request import InitProducerIdRequest

from ..errors import ErrorCode, KafkaError
from . import _txn
from .ports import Caller, Response



class InitProducerId(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: InitProducerIdRequest) -> Response:
        try:
            pid, epoch = await self.transactions.init_producer_id(
                request.transactional_id, int(request.transaction_timeout.total_seconds() * 1000),
                request.producer_id, request.producer_epoch)
        except KafkaError as e:
            return caller.respond(error_code=_txn.code_for(caller, "InitProducerId", e), producer_id=-1,
                                  producer_epoch=-1)
        return caller.respond(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch)
