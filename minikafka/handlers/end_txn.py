"""EndTxn: commit or abort. The coordinator records the decision, then writes a marker
into every partition of the transaction (and applies or drops its offset commits).

v5 answers with the producer id and epoch to use next: with transaction version 1 (the
only one minikafka offers; KIP-890 part 2 would bump the epoch here) they are unchanged."""

from __future__ import annotations

from kio.schema.end_txn.v5.request import EndTxnRequest

from ..errors import ErrorCode, KafkaError
from . import _txn
from .context import RequestContext, Response


async def handle(ctx: RequestContext, request: EndTxnRequest) -> Response:
    try:
        await _txn.coordinator(ctx).end_txn(request.transactional_id, request.producer_id, request.producer_epoch,
                                            request.committed)
        code = ErrorCode.none
    except KafkaError as e:
        code = _txn.code_for(ctx, "EndTxn", e)
    return ctx.respond(error_code=code, producer_id=request.producer_id, producer_epoch=request.producer_epoch)
