"""Produce: append record batches to partition leaders (acks 0, 1 and all).

The batches are stored exactly as the producer built them (compression included);
the leader only checks them and assigns offsets. With ``acks=all`` the answer waits
until every in-sync replica has the batch (``Partition.wait_for_replicas``); with
``acks=0`` no answer is sent at all. A transaction's first write to a partition is
verified with its coordinator first (KIP-890). With transaction protocol v2 (KIP-890
part 2: v12+, where the cluster finalizes ``transaction.version`` 2) that first write
adds the partition to the transaction instead; older versions, and every version where
``transaction.version`` is 1, are refused if the producer did not add it. v13 names
topics by id (KIP-516).
"""

from __future__ import annotations

import datetime
import logging
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from kio.schema.produce.v12.request import PartitionProduceData as NamedPartitionProduceData
from kio.schema.produce.v12.request import ProduceRequest as NamedProduceRequest
from kio.schema.produce.v12.request import TopicProduceData as NamedTopicProduceData
from kio.schema.produce.v13.request import PartitionProduceData, ProduceRequest, TopicProduceData

from .. import records
from ..errors import ErrorCode, KafkaError
from ..metadata import INTERNAL_TOPICS
from ..replica.partition import InvalidRecords
from ..security.acl import Operation, ResourceType
from ..transactions.verification import add_write, implicit_adds, verify_write
from ._topic_ids import ZERO, name_of, upgrade_within
from .context import RequestContext, Response

_UTC = datetime.UTC
ADDS_PARTITIONS_SINCE = 12  # Produce v12: a transaction protocol v2 client adds partitions by writing
log = logging.getLogger("minikafka.produce")


def _append_time(ms: int) -> datetime.datetime | None:
    return None if ms < 0 else datetime.datetime.fromtimestamp(ms / 1000, _UTC)


def _failed(ctx: RequestContext, index: int, code: ErrorCode, message: str | None = None,
            record_errors: Iterable[tuple[int, str | None]] = ()) -> Any:
    per_record = tuple(ctx.make("BatchIndexAndErrorMessage", batch_index=i, batch_index_error_message=m)
                       for i, m in record_errors) if ctx.has("BatchIndexAndErrorMessage") else ()
    return ctx.make("PartitionProduceResponse", index=index, error_code=code, base_offset=-1, log_append_time=None,
                    log_start_offset=-1, record_errors=per_record, error_message=message)


upgrade = upgrade_within(0, 13)  # v13 names topics by id
Request = ProduceRequest | NamedProduceRequest  # v13 as it is, older ones lifted to v12 (``upgrade``)
Data = PartitionProduceData | NamedPartitionProduceData


def _topics(ctx: RequestContext, request: Request
            ) -> list[tuple[str | None, uuid.UUID | None, TopicProduceData | NamedTopicProduceData]]:
    """(name, id, data) of each topic of the request; the name is None for an unknown id."""
    if isinstance(request, ProduceRequest):  # v13 (``upgrade``)
        return [(name_of(ctx, t.topic_id), t.topic_id, t) for t in request.topic_data]
    return [(t.name, ZERO, t) for t in request.topic_data]


def _respond(ctx: RequestContext, request: Request, answer: Callable[[int, Data], Any]) -> Response:
    topics = tuple(ctx.make("TopicProduceResponse", name=name, topic_id=topic_id,
                            partition_responses=tuple(answer(i, d) for d in t.partition_data))
                   for i, (name, topic_id, t) in enumerate(_topics(ctx, request)))
    return None if request.acks == 0 else ctx.respond(responses=topics)


def error_response(ctx: RequestContext, request: Request, code: ErrorCode) -> Response:
    """The fault API's answer: nothing is written, every partition fails with ``code``."""
    return _respond(ctx, request, lambda i, data: _failed(ctx, data.index, code))


async def _produce_one(ctx: RequestContext, request: Request, topic: str, data: Data) -> Any:
    broker = ctx.broker
    try:
        if not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, topic):
            raise KafkaError(ErrorCode.topic_authorization_failed, f"Not authorized to write to topic {topic!r}.")
        if data.records is None:
            raise KafkaError(ErrorCode.corrupt_message, "The produce request carried no records.")
        if topic in INTERNAL_TOPICS:  # only the coordinators write there, never a client
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot append to internal topic {topic}.")
        part = broker.leader_replica(topic, data.index)
        if request.acks == -1:
            part.check_min_insync()
        if request.transactional_id is not None:
            header = records.BatchHeader.parse(data.records)
            if implicit_adds(broker.config["transaction.version"], ctx.api_version, ADDS_PARTITIONS_SINCE):
                await add_write(part, header, request.transactional_id, broker.metadata, broker.peers)
            else:
                verify_write(part, header, request.transactional_id, broker.metadata, broker.peers)
        info = part.append_produced(data.records)
        if request.acks == -1:
            await part.wait_for_replicas(info.last_offset + 1, request.timeout)
    except records.CorruptRecordError as e:
        return _failed(ctx, data.index, ErrorCode.corrupt_message, str(e))
    except OSError as e:  # the disk refused the write (full, over quota): nothing was stored
        log.error("cannot write %s-%d to disk: %s", topic, data.index, e)
        return _failed(ctx, data.index, ErrorCode.kafka_storage_error,
                       f"The broker could not write to its log directory: {e.strerror or e}.")
    except InvalidRecords as e:
        return _failed(ctx, data.index, e.code, e.message, e.record_errors)
    except KafkaError as e:
        return _failed(ctx, data.index, e.code, e.message)
    return ctx.make("PartitionProduceResponse", index=data.index, error_code=ErrorCode.none,
                    base_offset=info.base_offset, log_append_time=_append_time(info.log_append_time),
                    log_start_offset=info.log_start_offset, record_errors=(), error_message=None)


async def handle(ctx: RequestContext, request: Request) -> Response:
    answers: dict[tuple[int, int], Any] = {}
    for i, (name, _, t) in enumerate(_topics(ctx, request)):
        for data in t.partition_data:
            if request.acks not in (0, 1, -1):
                answers[i, data.index] = _failed(ctx, data.index, ErrorCode.invalid_required_acks)
            elif name is None:
                answers[i, data.index] = _failed(ctx, data.index, ErrorCode.unknown_topic_id)
            else:
                answers[i, data.index] = await _produce_one(ctx, request, name, data)
    return _respond(ctx, request, lambda i, data: answers[i, data.index])
