"""What the share-group handlers share: topic ids, acknowledgements, leaders, and the base of
their handler objects, which hold the broker's ``SharePort``.

ShareFetch and ShareAcknowledge may carry Renew acknowledgements (type 4, KIP-1222) from
version 2 on; in version 1 the type does not exist, and a partition carrying it is
INVALID_REQUEST.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, TypeVar

from kio.schema.share_acknowledge.v2.request import AcknowledgeTopic, ShareAcknowledgeRequest
from kio.schema.share_fetch.v2.request import FetchTopic, ShareFetchRequest

from ..errors import ErrorCode, KafkaError
from .ports import Ack, Caller, SharePartition, SharePort

NO_ID = uuid.UUID(int=0)
RENEW = 4  # the Renew acknowledge type (KIP-1222)
RENEW_SINCE = 2  # the version of ShareFetch and ShareAcknowledge that added Renew

V = TypeVar("V")


class ShareHandler:
    """A share-group API's handler, constructed by the registry with the broker's share port."""

    def __init__(self, share: SharePort) -> None:
        self.share = share

    def resolve(self, topics: Iterable[FetchTopic | AcknowledgeTopic]
                ) -> tuple[dict[SharePartition, list[Ack]], dict[tuple[uuid.UUID, int], list[Ack]]]:
        """Requested partitions by (topic name, index) with their acknowledgements, and those whose
        topic id is unknown by (topic id, index)."""
        known: dict[SharePartition, list[Ack]] = {}
        unknown: dict[tuple[uuid.UUID, int], list[Ack]] = {}
        for t in topics:
            name = self.share.topic_name_of(str(t.topic_id)) if t.topic_id else None
            for p in t.partitions:
                batches: list[Ack] = [(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                           for b in p.acknowledgement_batches]
                if name is None:
                    unknown[(t.topic_id or NO_ID, p.partition_index)] = batches
                else:
                    known[(name, p.partition_index)] = batches
        return known, unknown

    def topic_id(self, topic: str) -> uuid.UUID:
        """The topic's id; the zero id for a topic that is not there (any longer)."""
        found = self.share.topic_id_of(topic)
        return uuid.UUID(found) if found else NO_ID

    def leader(self, caller: Caller, topic: str, index: int) -> Any:
        leader_id, epoch = self.share.partition_leader(topic, index) or (-1, -1)
        return caller.make("LeaderIdAndEpoch", leader_id=leader_id, leader_epoch=epoch)

    def node_endpoints(self, caller: Caller, partitions: Iterable[SharePartition]) -> tuple[Any, ...]:
        """The leaders of partitions answered NOT_LEADER_OR_FOLLOWER, so the client can go there."""
        ids = {(self.share.partition_leader(t, i) or (-1, -1))[0] for t, i in partitions}
        out = []
        for b in sorted(ids):
            address = self.share.broker_address(b)
            if address is not None:
                out.append(caller.make("NodeEndpoint", node_id=b, host=address[0], port=address[1], rack=None))
        return tuple(out)

    async def acknowledge(self, caller: Caller, group_id: str, member_id: str, acks: dict[SharePartition, list[Ack]]
                          ) -> dict[SharePartition, KafkaError | None]:
        """Apply a request's acknowledgements; per partition, the error of each (None when applied).

        Before version 2 a Renew acknowledgement is no acknowledgement type at all: its
        partition is INVALID_REQUEST and nothing of it is applied."""
        refused: dict[SharePartition, KafkaError | None] = {}
        if caller.api_version < RENEW_SINCE:
            refused = {tp: KafkaError(ErrorCode.invalid_request, f"Acknowledge type {RENEW} (Renew) "
                                      f"needs version {RENEW_SINCE} of ShareFetch and ShareAcknowledge.")
                       for tp, batches in acks.items() if any(RENEW in types for _, _, types in batches)}
        wanted = {tp: batches for tp, batches in acks.items() if tp not in refused}
        applied = await self.share.acknowledge_share_records(group_id, member_id, wanted) if wanted else {}
        return {**refused, **applied}


def check_ids(request: ShareFetchRequest | ShareAcknowledgeRequest) -> tuple[str, str]:
    """The request's group id and member id; INVALID_REQUEST when either is missing."""
    if not request.group_id:
        raise KafkaError(ErrorCode.invalid_request, "A share request needs a group id.")
    if not request.member_id:
        raise KafkaError(ErrorCode.invalid_request, "A share request needs a member id.")
    return request.group_id, request.member_id


def by_topic(entries: dict[tuple[Any, int], V]) -> dict[Any, list[tuple[int, V]]]:
    """{(topic, index): x} as {topic: [(index, x), ...]}, indexes in order."""
    out: dict[Any, list[tuple[int, V]]] = {}
    for (topic, index), value in sorted(entries.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        out.setdefault(topic, []).append((index, value))
    return out
