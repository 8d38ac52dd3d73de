"""EndTxn: commit or abort. The coordinator records the decision, then writes a marker
into every partition of the transaction (and applies or drops its offset commits).

v5 is transaction protocol v2 (KIP-890 part 2): the coordinator bumps the producer's
epoch as the transaction ends and answers with the producer id and epoch to use next
(a new id once the epoch is used up). Older versions keep the epoch; their answer, where
it has the fields, repeats the request's."""

from __future__ import annotations

from kio.schema.end_txn.v5.request import EndTxnRequest

from ..errors import ErrorCode, KafkaError
from . import _txn
from .ports import Caller, Response

BUMPS_EPOCH_SINCE = 5

class EndTxn(_txn.TxnHandler):
    async def handle(self, caller: Caller, request: EndTxnRequest) -> Response:
        pid, epoch = int(request.producer_id), int(request.producer_epoch)
        try:
            pid, epoch = await self.transactions.end_transaction(
                request.transactional_id, pid, epoch, request.committed,
                bump_epoch=caller.api_version >= BUMPS_EPOCH_SINCE)
            code = ErrorCode.none
        except KafkaError as e:
            code = _txn.code_for(caller, "EndTxn", e)
        return caller.respond(error_code=code, producer_id=pid, producer_epoch=epoch)
