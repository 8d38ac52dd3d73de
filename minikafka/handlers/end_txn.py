"""EndTxn: commit or abort. The coordinator records the decision, then writes a marker
into every partition of the transaction (and applies or drops its offset commits)."""

from __future__ import annotations

from . import _txn
from ..errors import ErrorCode, KafkaError


async def handle(ctx, request):
    try:
        await _txn.coordinator(ctx).end_txn(request.transactional_id, request.producer_id, request.producer_epoch,
                                            request.committed)
        code = ErrorCode.none
    except KafkaError as e:
        code = _txn.code_for(ctx, "EndTxn", e)
    return ctx.respond(error_code=code)
