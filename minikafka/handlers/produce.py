"""Produce: append record batches to partition leaders (acks 0, 1 and all).

The batches are stored exactly as the producer built them (compression included);
the leader only checks them and assigns offsets. With ``acks=all`` the answer waits
until every in-sync replica has the batch (``Broker.wait_for_replicas``); with
``acks=0`` no answer is sent at all.
"""

from __future__ import annotations

import datetime

from .. import records
from ..errors import ErrorCode, KafkaError

_UTC = datetime.timezone.utc


def _append_time(ms: int):
    return None if ms < 0 else datetime.datetime.fromtimestamp(ms / 1000, _UTC)


async def _produce_one(ctx, request, topic: str, data):
    broker = ctx.broker
    try:
        fault = broker.faults.take_error(0)
        if fault is not None:
            raise KafkaError(fault)
        if data.records is None:
            raise KafkaError(ErrorCode.corrupt_message, "The produce request carried no records.")
        part = broker.partition(topic, data.index)
        if request.acks == -1:
            broker.check_min_insync(part)
        if request.transactional_id is not None and broker.transactions is not None:
            header = records.BatchHeader.parse(data.records)
            broker.transactions.check_produce(request.transactional_id, part, header.producer_id,
                                              header.producer_epoch)
        info = part.append_produced(data.records)
        if request.acks == -1:
            await broker.wait_for_replicas(part, info.last_offset + 1, request.timeout)
    except records.CorruptRecordError as e:
        return ctx.make("PartitionProduceResponse", index=data.index, error_code=ErrorCode.corrupt_message,
                        base_offset=-1, log_append_time=None, log_start_offset=-1, record_errors=(), error_message=str(e))
    except KafkaError as e:
        return ctx.make("PartitionProduceResponse", index=data.index, error_code=e.code, base_offset=-1,
                        log_append_time=None, log_start_offset=-1, record_errors=(), error_message=e.message)
    return ctx.make("PartitionProduceResponse", index=data.index, error_code=ErrorCode.none,
                    base_offset=info.base_offset, log_append_time=_append_time(info.log_append_time),
                    log_start_offset=info.log_start_offset, record_errors=(), error_message=None)


async def handle(ctx, request):
    topics = []
    for t in request.topic_data:
        parts = []
        for data in t.partition_data:
            if request.acks not in (0, 1, -1):
                parts.append(ctx.make("PartitionProduceResponse", index=data.index,
                                      error_code=ErrorCode.invalid_required_acks, base_offset=-1,
                                      log_append_time=None, log_start_offset=-1, record_errors=()))
            else:
                parts.append(await _produce_one(ctx, request, t.name, data))
        topics.append(ctx.make("TopicProduceResponse", name=t.name, partition_responses=tuple(parts)))
    if request.acks == 0:
        return None
    return ctx.respond(responses=tuple(topics))
