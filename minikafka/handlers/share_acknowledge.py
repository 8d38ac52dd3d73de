"""ShareAcknowledge (KIP-932): accept, release or reject records without fetching more.

A share consumer uses it to commit acknowledgements on their own (``commit_sync``) and,
with epoch -1, to close its share session when it leaves: what it still holds is then
released for other members. Epoch 0 is INVALID_SHARE_SESSION_EPOCH (only ShareFetch
opens a session); a record the member does not hold is INVALID_RECORD_STATE for its
partition. Version 2 (KIP-1222) may carry Renew acknowledgements, which restart the
acquisition locks of records the member keeps holding (when the group's
``share.renew.acknowledge.enable`` allows it), and answers the lock duration
(``AcquisitionLockTimeoutMs``), so the client knows how long a renewed record stays its own.
"""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.share_acknowledge.v2.request import ShareAcknowledgeRequest

from ..errors import ErrorCode, KafkaError
from ..share.sessions import FINAL_EPOCH
from ._share import acknowledge, by_topic, check_ids, leader, node_endpoints, resolve, topic_id
from .context import RequestContext, Response


def _partition(ctx: RequestContext, topic: str, index: int, error: KafkaError | None) -> Any:
    return ctx.make("PartitionData", partition_index=index, error_code=error.code if error else ErrorCode.none,
                    error_message=error.message if error else None, current_leader=leader(ctx, topic, index))


async def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> Response:
    manager = ctx.broker.share_partitions
    known, unknown = resolve(ctx, request.topics)
    try:
        group_id, member_id = check_ids(request)
        session = manager.acknowledge_session(group_id, member_id, request.share_session_epoch)
    except KafkaError as e:
        return ctx.respond(error_code=e.code, error_message=e.message, responses=(), node_endpoints=(),
                           acquisition_lock_timeout=datetime.timedelta(0))
    results = await acknowledge(ctx, manager, group_id, member_id, {tp: b for tp, b in known.items() if b})
    if request.share_session_epoch == FINAL_EPOCH:
        await manager.close(session)
    missing = KafkaError(ErrorCode.unknown_topic_id)
    topics = [ctx.make("ShareAcknowledgeTopicResponse", topic_id=topic_id(ctx, t),
                       partitions=tuple(_partition(ctx, t, i, e) for i, e in parts))
              for t, parts in by_topic(results).items()]
    topics += [ctx.make("ShareAcknowledgeTopicResponse", topic_id=tid,
                        partitions=tuple(_partition(ctx, "", i, missing) for i, _ in parts))
               for tid, parts in by_topic(unknown).items()]
    moved = [tp for tp, e in results.items() if e and e.code == ErrorCode.not_leader_or_follower]
    lock = datetime.timedelta(milliseconds=manager.group_config(group_id)["share.record.lock.duration.ms"])
    return ctx.respond(error_code=ErrorCode.none, responses=tuple(topics), node_endpoints=node_endpoints(ctx, moved),
                       acquisition_lock_timeout=lock)
