"""DescribeTopicPartitions (KIP-966): topics and their partitions, a page at a time.

What admin clients use instead of Metadata to describe topics with many partitions. The
topics (all of them when the request names none) are answered in name order, each
partition with its leader, epoch, replicas, ISR and offline replicas, and at most
``ResponsePartitionLimit`` partitions per answer (capped at 2000, Kafka's
``max.request.partition.size.limit``). When more remain, ``NextCursor`` names the topic
and partition to start from in the next request. Each partition lists its eligible leader
replicas and the last known ones (KIP-966), as a Kafka 4.1+ cluster does.
Topics the principal may not DESCRIBE are left out of "all topics", and named ones are
answered TOPIC_AUTHORIZATION_FAILED at the end, without their id, as Kafka does.
"""

from __future__ import annotations

import uuid
from collections.abc import Container, Iterable
from typing import Any

from kio.schema.describe_topic_partitions.v0.request import DescribeTopicPartitionsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from .ports import Caller, ClusterViewPort, PartitionView, Response

MAX_PARTITIONS = 2000  # max.request.partition.size.limit


def _partition(caller: Caller, p: PartitionView, live: Container[int]) -> Any:
    leader = p.leader if p.leader in live else -1
    return caller.make("DescribeTopicPartitionsResponsePartition",
                       error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                       partition_index=p.index, leader_id=leader, leader_epoch=p.leader_epoch,
                       replica_nodes=tuple(p.replicas), isr_nodes=tuple(b for b in p.isr if b in live),
                       eligible_leader_replicas=tuple(p.elr), last_known_elr=tuple(p.last_known_elr),
                       offline_replicas=tuple(b for b in p.replicas if b not in live))


def _topic(caller: Caller, name: str, code: ErrorCode, partitions: Iterable[Any] = (),
           topic_id: uuid.UUID | None = None) -> Any:
    return caller.make("DescribeTopicPartitionsResponseTopic", error_code=code, name=name,
                       topic_id=topic_id or uuid.UUID(int=0), is_internal=name.startswith("__"),
                       partitions=tuple(partitions))


class DescribeTopicPartitions:
    """The DescribeTopicPartitions API over the broker's ``ClusterViewPort``."""

    def __init__(self, cluster: ClusterViewPort) -> None:
        self.cluster = cluster

    async def handle(self, caller: Caller, request: DescribeTopicPartitionsRequest) -> Response:
        every, cursor = not request.topics, request.cursor
        if cursor is not None and not every and cursor.topic_name not in {t.name for t in request.topics}:
            # Kafka: the cursor's topic must be one of those asked for, or the request is invalid.
            invalid = ErrorCode.invalid_request
            return caller.respond(topics=tuple(_topic(caller, t.name, invalid) for t in request.topics),
                                  next_cursor=None)
        remaining, topics, next_cursor = min(request.response_partition_limit, MAX_PARTITIONS), [], None
        known, live = self.cluster.topics(), self.cluster.live_brokers()
        names = self._names(request)
        denied = [n for n in names if not caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, n)]
        for name in (n for n in names if n not in denied):
            if remaining <= 0:
                next_cursor = caller.make("Cursor", topic_name=name, partition_index=0)
                break
            info = known.get(name)
            if info is None:
                if not every:
                    topics.append(self._missing(caller, name))
                continue
            first = cursor.partition_index if cursor is not None and cursor.topic_name == name else 0
            page = info.partitions[first:first + remaining]
            topics.append(_topic(caller, name, ErrorCode.none, (_partition(caller, p, live) for p in page),
                                 uuid.UUID(info.topic_id)))
            remaining -= len(page)
            if first + len(page) < len(info.partitions):
                next_cursor = caller.make("Cursor", topic_name=name, partition_index=first + len(page))
                break
        if not every:
            topics += [_topic(caller, n, ErrorCode.topic_authorization_failed) for n in denied]
        return caller.respond(topics=tuple(topics), next_cursor=next_cursor)

    def _missing(self, caller: Caller, name: str) -> Any:
        try:
            self.cluster.validate_topic_name(name)
            return _topic(caller, name, ErrorCode.unknown_topic_or_partition)
        except KafkaError:
            return _topic(caller, name, ErrorCode.invalid_topic_exception)

    def _names(self, request: DescribeTopicPartitionsRequest) -> list[str]:
        names: list[str] = [t.name for t in request.topics] or list(self.cluster.topics())
        start = request.cursor.topic_name if request.cursor is not None else ""
        return sorted(n for n in set(names) if n >= start)
