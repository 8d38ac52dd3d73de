"""FindCoordinator: which broker coordinates a consumer group or a transactional id.

A group's coordinator is the leader of its partition of ``__consumer_offsets``
(``abs(hashCode(group)) % partitions``), a transactional id's the leader of its
``__transaction_state`` partition; both topics are created here on first need, as
Kafka does. v0 has no key type (always a group). v4 batches several keys in one
request; it is not advertised, so clients send one key at a time.
"""

from __future__ import annotations

from ..errors import ErrorCode, KafkaError
from ._groups import coordinator

GROUP, TRANSACTION = 0, 1


def _leader(ctx, key: str, key_type: int) -> int:
    if key_type == GROUP:
        return coordinator(ctx).coordinator_id(key)
    if key_type == TRANSACTION:
        index = ctx.broker.transactions.partition_of(key)
        return ctx.broker.metadata.topics["__transaction_state"].partitions[index].leader
    raise KafkaError(ErrorCode.invalid_request, f"Unknown coordinator key type {key_type}.")


def _node(ctx, key: str, key_type: int) -> tuple[int, str, int]:
    leader = _leader(ctx, key, key_type)
    address = ctx.broker_endpoints.get(leader)
    if address is None:
        raise KafkaError(ErrorCode.coordinator_not_available,
                         f"The coordinator of {key!r} (broker {leader}) is not available right now.")
    return leader, address[0], address[1]


async def handle(ctx, request):
    try:
        node_id, host, port = _node(ctx, request.key, request.key_type)
    except KafkaError as e:
        return ctx.respond(error_code=e.code, error_message=e.message, node_id=-1, host="", port=-1)
    return ctx.respond(error_code=ErrorCode.none, error_message=None, node_id=node_id, host=host, port=port)
