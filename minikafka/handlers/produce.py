"""Produce: append record batches to partition leaders (acks 0, 1 and all).

The batches are stored exactly as the producer built them (compression included);
the leader only checks them and assigns offsets. With ``acks=all`` the answer waits
until every in-sync replica has the batch (``Partition.wait_for_replicas``); with
``acks=0`` no answer is sent at all. A transaction's first write to a partition is
verified with its coordinator first (KIP-890). With transaction protocol v2 (KIP-890
part 2: v12+, where the cluster finalizes ``transaction.version`` 2) that first write
adds the partition to the transaction instead; older versions, and every version where
``transaction.version`` is 1, are refused if the producer did not add it. v13 names
topics by id (KIP-516). The handler sees only ``ports.ProducePort``: the broker appends
(``record_access``), the handler checks the request and builds the answer.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from kio.schema.produce.v12.request import PartitionProduceData as NamedPartitionProduceData
from kio.schema.produce.v12.request import ProduceRequest as NamedProduceRequest
from kio.schema.produce.v12.request import TopicProduceData as NamedTopicProduceData
from kio.schema.produce.v13.request import PartitionProduceData, ProduceRequest, TopicProduceData

from ..errors import ErrorCode, InvalidRecords, KafkaError
from ..security.acl import Operation, ResourceType
from ._topic_ids import ZERO, upgrade_within
from .ports import Caller, ProducePort, Response

_UTC = datetime.UTC
ADDS_PARTITIONS_SINCE = 12  # Produce v12: a transaction protocol v2 client adds partitions by writing
ACKS = (0, 1, -1)


def _append_time(ms: int) -> datetime.datetime | None:
    return None if ms < 0 else datetime.datetime.fromtimestamp(ms / 1000, _UTC)


def _failed(caller: Caller, index: int, code: ErrorCode, message: str | None = None,
            record_errors: Iterable[tuple[int, str | None]] = ()) -> Any:
    per_record = tuple(caller.make("BatchIndexAndErrorMessage", batch_index=i, batch_index_error_message=m)
                       for i, m in record_errors) if caller.has("BatchIndexAndErrorMessage") else ()
    return caller.make("PartitionProduceResponse", index=index, error_code=code, base_offset=-1,
                       log_append_time=None, log_start_offset=-1, record_errors=per_record, error_message=message)


upgrade = upgrade_within(0, 13)  # v13 names topics by id
Request = ProduceRequest | NamedProduceRequest  # v13 as it is, older ones lifted to v12 (``upgrade``)
Data = PartitionProduceData | NamedPartitionProduceData
Topics = list[tuple[str | None, uuid.UUID | None, TopicProduceData | NamedTopicProduceData]]


def _respond(caller: Caller, request: Request, topics: Topics, answer: Callable[[int, Data], Any]) -> Response:
    built = tuple(caller.make("TopicProduceResponse", name=name, topic_id=topic_id,
                              partition_responses=tuple(answer(i, d) for d in t.partition_data))
                  for i, (name, topic_id, t) in enumerate(topics))
    return None if request.acks == 0 else caller.respond(responses=built)


def _named(request: Request) -> Topics:
    """(name, id, data) of a request that names its topics (v0-v12); the fault answer needs no lookup."""
    if isinstance(request, ProduceRequest):
        return [(None, t.topic_id, t) for t in request.topic_data]
    return [(t.name, ZERO, t) for t in request.topic_data]


def error_response(caller: Caller, request: Request, code: ErrorCode) -> Response:
    """The fault API's answer: nothing is written, every partition fails with ``code``."""
    return _respond(caller, request, _named(request), lambda i, data: _failed(caller, data.index, code))


class Produce:
    def __init__(self, port: ProducePort) -> None:
        self.port = port

    def _topics(self, request: Request) -> Topics:
        """(name, id, data) of each topic of the request; the name is None for an unknown id."""
        if isinstance(request, ProduceRequest):  # v13 (``upgrade``)
            return [(self.port.topic_name_of(str(t.topic_id)), t.topic_id, t) for t in request.topic_data]
        return _named(request)

    async def _one(self, caller: Caller, request: Request, topic: str, data: Data) -> Any:
        try:
            if not caller.allowed(Operation.WRITE, ResourceType.TOPIC, topic):
                raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to write to topic {topic!r}.")
            if data.records is None:
                raise KafkaError(ErrorCode.corrupt_message, "The produce request carried no records.")
            appended = await self.port.append_batch(
                topic, data.index, data.records, request.acks, request.timeout, request.transactional_id,
                may_add_partition=caller.api_version >= ADDS_PARTITIONS_SINCE)
        except InvalidRecords as e:
            return _failed(caller, data.index, e.code, e.message, e.record_errors)
        except KafkaError as e:
            return _failed(caller, data.index, e.code, e.message)
        return caller.make("PartitionProduceResponse", index=data.index, error_code=ErrorCode.none,
                           base_offset=appended.base_offset, log_append_time=_append_time(appended.log_append_time),
                           log_start_offset=appended.log_start_offset, record_errors=(), error_message=None)

    async def handle(self, caller: Caller, request: Request) -> Response:
        answers: dict[tuple[int, int], Any] = {}
        topics = self._topics(request)
        for i, (name, _, t) in enumerate(topics):
            for data in t.partition_data:
                if request.acks not in ACKS:
                    answers[i, data.index] = _failed(caller, data.index, ErrorCode.invalid_required_acks)
                elif name is None:
                    answers[i, data.index] = _failed(caller, data.index, ErrorCode.unknown_topic_id)
                else:
                    answers[i, data.index] = await self._one(caller, request, name, data)
        return _respond(caller, request, topics, lambda i, data: answers[i, data.index])
