"""ListOffsets: find an offset by time, or the start or end of a partition.

Which offset each timestamp names (-1 the end, -2 the start, -3 the largest timestamp,
-4/-5/-6 the tiered-storage ones, else the first record at or after a time) is the
replica's business (``minikafka.replica.offset_lookup``); the handler sees only
``ports.OffsetsPort``, checks DESCRIBE on each topic and builds the answer.
"""

from __future__ import annotations

from typing import Any

from kio.schema.list_offsets.v11.request import ListOffsetsPartition, ListOffsetsRequest

from ..errors import ErrorCode, KafkaError
from ..security.acl import Operation, ResourceType
from .ports import Caller, OffsetsPort, Response

READ_COMMITTED = 1


def _answer(caller: Caller, index: int, code: ErrorCode, timestamp: int = -1, offset: int = -1,
            epoch: int = -1) -> Any:
    return caller.make("ListOffsetsPartitionResponse", partition_index=index, error_code=code,
                       timestamp=timestamp, offset=offset, leader_epoch=epoch)


def error_response(caller: Caller, request: ListOffsetsRequest, code: ErrorCode) -> Response:
    """The fault API's answer: every requested partition fails with ``code``."""
    topics = tuple(caller.make("ListOffsetsTopicResponse", name=t.name,
                               partitions=tuple(_answer(caller, p.partition_index, code) for p in t.partitions))
                   for t in request.topics)
    return caller.respond(topics=topics)


class ListOffsets:
    def __init__(self, port: OffsetsPort) -> None:
        self.port = port

    def _partition(self, caller: Caller, topic: str, p: ListOffsetsPartition, committed: bool) -> Any:
        try:
            if not caller.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
                raise KafkaError(ErrorCode.topic_authorization_failed)
            timestamp, offset, epoch = self.port.list_offset(topic, p.partition_index, p.timestamp, committed)
        except KafkaError as e:
            return _answer(caller, p.partition_index, e.code)
        return _answer(caller, p.partition_index, ErrorCode.none, timestamp, offset, epoch)

    async def handle(self, caller: Caller, request: ListOffsetsRequest) -> Response:
        committed = request.isolation_level == READ_COMMITTED
        topics = tuple(
            caller.make("ListOffsetsTopicResponse", name=t.name,
                        partitions=tuple(self._partition(caller, t.name, p, committed) for p in t.partitions))
            for t in request.topics)
        return caller.respond(topics=topics)
