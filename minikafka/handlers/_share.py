"""What the ShareFetch and ShareAcknowledge handlers share: topic ids, acknowledgements, leaders.

Both requests may carry Renew acknowledgements (type 4, KIP-1222) from version 2 on; in
version 1 the type does not exist, and a partition carrying it is INVALID_REQUEST.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from kio.schema.share_acknowledge.v2.request import AcknowledgeTopic, ShareAcknowledgeRequest
from kio.schema.share_fetch.v2.request import FetchTopic, ShareFetchRequest

from ..errors import ErrorCode, KafkaError
from ..share.manager import SharePartitionManager
from ..share.partition import AckBatch
from ..share.sessions import SharePartitionId
from ..share.states import AckType
from .context import RequestContext

NO_ID = uuid.UUID(int=0)
RENEW_SINCE = 2  # the version of ShareFetch and ShareAcknowledge that added Renew (KIP-1222)


def check_ids(request: ShareFetchRequest | ShareAcknowledgeRequest) -> tuple[str, str]:
    """The request's group id and member id; INVALID_REQUEST when either is missing."""
    if not request.group_id:
        raise KafkaError(ErrorCode.invalid_request, "A share request needs a group id.")
    if not request.member_id:
        raise KafkaError(ErrorCode.invalid_request, "A share request needs a member id.")
    return request.group_id, request.member_id


def resolve(ctx: RequestContext, topics: Iterable[FetchTopic | AcknowledgeTopic]) -> tuple[dict, dict]:
    """Requested partitions by (topic name, index) with their acknowledgements, and those whose
    topic id is unknown by (topic id, index)."""
    known, unknown = {}, {}
    for t in topics:
        info = ctx.broker.metadata.topic_by_id(str(t.topic_id)) if t.topic_id else None
        for p in t.partitions:
            batches = [AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                       for b in p.acknowledgement_batches]
            if info is None:
                unknown[(t.topic_id or NO_ID, p.partition_index)] = batches
            else:
                known[(info.name, p.partition_index)] = batches
    return known, unknown


def topic_id(ctx: RequestContext, topic: str) -> uuid.UUID:
    info = ctx.broker.metadata.topics.get(topic)
    return uuid.UUID(info.topic_id) if info else NO_ID


def leader(ctx: RequestContext, topic: str, index: int) -> Any:
    info = ctx.broker.metadata.topics.get(topic)
    part = info.partitions[index] if info and 0 <= index < len(info.partitions) else None
    return ctx.make("LeaderIdAndEpoch", leader_id=part.leader if part else -1,
                    leader_epoch=part.leader_epoch if part else -1)


def node_endpoints(ctx: RequestContext, partitions: Iterable[tuple[str, int]]) -> tuple:
    """The leaders of partitions answered NOT_LEADER_OR_FOLLOWER, so the client can go there."""
    ids = {leader(ctx, t, i).leader_id for t, i in partitions}
    brokers = ctx.broker.metadata.brokers
    return tuple(ctx.make("NodeEndpoint", node_id=b, host=brokers[b][0], port=brokers[b][1], rack=None)
                 for b in sorted(ids) if b in brokers)


def by_topic(entries: dict) -> dict:
    """{(topic, index): x} as {topic: [(index, x), ...]}, indexes in order."""
    out: dict = {}
    for (topic, index), value in sorted(entries.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        out.setdefault(topic, []).append((index, value))
    return out


async def acknowledge(ctx: RequestContext, manager: SharePartitionManager, group_id: str, member_id: str,
                      acks: dict[SharePartitionId, list[AckBatch]]) -> dict[SharePartitionId, KafkaError | None]:
    """Apply a request's acknowledgements; per partition, the error of each (None when applied).

    Before version 2 a Renew acknowledgement is no acknowledgement type at all: its
    partition is INVALID_REQUEST and nothing of it is applied."""
    refused: dict[SharePartitionId, KafkaError | None] = {}
    if ctx.api_version < RENEW_SINCE:
        refused = {tp: KafkaError(ErrorCode.invalid_request, f"Acknowledge type {int(AckType.RENEW)} (Renew) "
                                  f"needs version {RENEW_SINCE} of ShareFetch and ShareAcknowledge.")
                   for tp, batches in acks.items() if any(AckType.RENEW in b.types for b in batches)}
    wanted = {tp: batches for tp, batches in acks.items() if tp not in refused}
    return {**refused, **(await manager.acknowledge(group_id, member_id, wanted) if wanted else {})}
