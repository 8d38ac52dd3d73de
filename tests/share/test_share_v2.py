"""ShareFetch and ShareAcknowledge v2 (Kafka 4.2), raw requests on one in-process broker
(``minikafka.assembly``): KIP-1206's record-limit acquire mode, KIP-1222's Renew acknowledgement
(type 4) that restarts an acquisition lock, ``IsRenewAck`` (renew, fetch nothing), the lock
duration ShareAcknowledge v2 answers, and Kafka's errors for what a v2 request may not say.

The broker's clock is a ``ManualClock`` the test moves, and the lock timer is run by hand
(``expire_locks``), so a lock's expiry is exact, not slept for.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from minikafka import assembly
from minikafka.assembly import DirectBroker
from minikafka.clock import ManualClock
from minikafka.errors import ErrorCode
from minikafka.protocol import codec
from minikafka.records import Record, build_batch

PRODUCE, SHARE_FETCH, SHARE_ACK, ALTER = 0, 78, 79, 44
ACCEPT, RENEW = 1, 4
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1
LOCK_MS = 1500
GROUP, MEMBER = "g", "m1"
Acks = tuple[tuple[int, int, int], ...]  # (first offset, last offset, acknowledge type)


def run(check: Callable[[DirectBroker, ManualClock], Awaitable[Any]], renew: bool = True) -> Any:
    """``check`` on a broker with topic ``orders`` holding one batch of five records (offsets 0-4)
    that member m1's share session (open, epoch 1) may acquire; ``renew``: the group allows Renew."""
    async def main(broker: DirectBroker) -> Any:
        await alter_group(broker, "share.auto.offset.reset", "earliest")
        if renew:
            await alter_group(broker, "share.renew.acknowledge.enable", "true")
        await broker.call(produce(b"a", b"b", b"c", b"d", b"e"))
        opened = await broker.call(share_fetch(2, broker, 0, max_records=0))
        assert opened.error_code == ErrorCode.none and not acquired(opened)
        return await check(broker, clock)
    config = {"group.share.record.lock.duration.ms": LOCK_MS, "group.share.min.record.lock.duration.ms": 1000}
    clock = ManualClock(monotonic_ms=1_000_000)
    return assembly.run(main, config, {"orders": 1}, clock)


async def alter_group(broker: DirectBroker, name: str, value: str) -> None:
    module = codec.request_module(ALTER, 1)
    setting = codec.entity(module, "AlterableConfig", name=name, config_operation=0, value=value)
    group = codec.entity(module, "AlterConfigsResource", resource_type=32, resource_name=GROUP, configs=(setting,))
    answer = await broker.call(codec.make(codec.request_class(ALTER, 1), resources=(group,), validate_only=False))
    assert answer.responses[0].error_code == ErrorCode.none, answer


def produce(*values: bytes) -> Any:
    records = build_batch([Record(offset=i, timestamp=1_700_000_000_000, key=None, value=v)
                           for i, v in enumerate(values)])
    module = codec.request_module(PRODUCE, 9)
    data = codec.entity(module, "PartitionProduceData", index=0, records=records)
    topics = (codec.entity(module, "TopicProduceData", name="orders", partition_data=(data,)),)
    return codec.downgrade(codec.request_class(PRODUCE, 9), transactional_id=None, acks=-1,
                           timeout=datetime.timedelta(seconds=1), topic_data=topics)


def _topics(module: Any, broker: DirectBroker, acks: Acks, topic: str) -> tuple:
    batches = tuple(codec.entity(module, "AcknowledgementBatch", first_offset=f, last_offset=last,
                                 acknowledge_types=(t,)) for f, last, t in acks)
    kind = "FetchPartition" if module.__name__.startswith("kio.schema.share_fetch") else "AcknowledgePartition"
    part = codec.entity(module, kind, partition_index=0, acknowledgement_batches=batches)
    topic_id = uuid.UUID(broker.metadata.topics["orders"].topic_id)
    return (codec.entity(module, topic, topic_id=topic_id, partitions=(part,)),)


def share_fetch(version: int, broker: DirectBroker, epoch: int, acks: Acks = (), max_records: int = 10,
                member: str = MEMBER, **v2: Any) -> Any:
    """A ShareFetch of partition 0 of ``orders``, answered at once (MaxWaitMs 0)."""
    module = codec.request_module(SHARE_FETCH, version)
    return codec.downgrade(codec.request_class(SHARE_FETCH, version), group_id=GROUP, member_id=member,
                           share_session_epoch=epoch, max_wait=datetime.timedelta(0), min_bytes=0,
                           max_bytes=v2.pop("max_bytes", 1 << 20), max_records=max_records, batch_size=max_records,
                           topics=_topics(module, broker, acks, "FetchTopic"), forgotten_topics_data=(), **v2)


def share_ack(version: int, broker: DirectBroker, epoch: int, acks: Acks, is_renew_ack: bool = False) -> Any:
    module = codec.request_module(SHARE_ACK, version)
    return codec.downgrade(codec.request_class(SHARE_ACK, version), group_id=GROUP, member_id=MEMBER,
                           share_session_epoch=epoch, topics=_topics(module, broker, acks, "AcknowledgeTopic"),
                           **({"is_renew_ack": is_renew_ack} if version >= 2 else {}))


def partition(answer: Any) -> Any:
    [topic] = answer.responses
    [part] = topic.partitions
    return part


def acquired(answer: Any) -> list[tuple[int, int, int]]:
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in answer.responses for p in t.partitions for a in p.acquired_records]


def states(broker: DirectBroker) -> dict[int, str]:
    described = broker.broker.share_partitions.describe(GROUP, "orders", 0)
    return {offset: r["state"] for offset, r in described["records"].items()}


def test_record_limit_acquires_no_more_than_max_records_even_mid_batch():
    async def check(broker: DirectBroker, _clock: ManualClock) -> tuple[Any, Any]:
        limited = await broker.call(share_fetch(2, broker, 1, max_records=2, share_acquire_mode=RECORD_LIMIT))
        optimized = await broker.call(share_fetch(2, broker, 2, max_records=2, share_acquire_mode=BATCH_OPTIMIZED))
        return limited, optimized

    limited, optimized = run(check)
    assert acquired(limited) == [(0, 1, 1)]
    assert acquired(optimized) == [(2, 4, 1)], "batch-optimized finishes the batch past MaxRecords"
    assert limited.acquisition_lock_timeout == datetime.timedelta(milliseconds=LOCK_MS)


def test_a_v1_share_fetch_is_batch_optimized():
    async def check(broker: DirectBroker, _clock: ManualClock) -> Any:
        return await broker.call(share_fetch(1, broker, 1, max_records=2))

    assert acquired(run(check)) == [(0, 4, 1)]


def test_renew_restarts_the_lock_and_share_acknowledge_v2_answers_its_duration():
    async def check(broker: DirectBroker, clock: ManualClock) -> tuple[Any, list[dict[int, str]]]:
        manager = broker.broker.share_partitions
        await broker.call(share_fetch(2, broker, 1, max_records=5))
        clock.advance(1000)
        renewed = await broker.call(share_ack(2, broker, 2, ((0, 1, RENEW),), is_renew_ack=True))
        clock.advance(1000)  # the first lock is over; the renewed one has 500 ms to go
        manager.expire_locks()
        seen = [states(broker)]
        clock.advance(600)
        manager.expire_locks()
        seen.append(states(broker))
        return renewed, seen

    renewed, (before, after) = run(check)
    assert renewed.error_code == ErrorCode.none and partition(renewed).error_code == ErrorCode.none
    assert renewed.acquisition_lock_timeout == datetime.timedelta(milliseconds=LOCK_MS)
    assert before == {0: "Acquired", 1: "Acquired", 2: "Available", 3: "Available", 4: "Available"}
    assert after == dict.fromkeys(range(5), "Available")


def test_a_renew_only_share_fetch_renews_and_fetches_nothing():
    async def check(broker: DirectBroker, clock: ManualClock) -> tuple[Any, Any, dict[int, str]]:
        await broker.call(share_fetch(2, broker, 1, max_records=1, share_acquire_mode=RECORD_LIMIT))
        clock.advance(1000)
        renew = share_fetch(2, broker, 2, ((0, 0, RENEW),), max_records=0, max_bytes=0, is_renew_ack=True)
        renewed = await broker.call(renew)
        clock.advance(1000)
        broker.broker.share_partitions.expire_locks()
        held = states(broker)
        accepted = await broker.call(share_fetch(2, broker, 3, ((0, 0, ACCEPT),), max_records=0, max_bytes=0,
                                                 is_renew_ack=True))
        return renewed, accepted, held

    renewed, accepted, held = run(check)
    assert renewed.error_code == ErrorCode.none
    part = partition(renewed)
    assert (part.acknowledge_error_code, part.acquired_records, part.records) == (ErrorCode.none, (), b"")
    assert held == {0: "Acquired"}, "records 1-4 are there to fetch, but a renew-only request takes none"
    assert partition(accepted).acknowledge_error_code == ErrorCode.none, "the renewed record is still held"


def test_renew_is_invalid_record_state_where_the_group_does_not_allow_it():
    async def check(broker: DirectBroker, _clock: ManualClock) -> tuple[Any, dict[int, str]]:
        await broker.call(share_fetch(2, broker, 1, max_records=5))
        answer = await broker.call(share_ack(2, broker, 2, ((0, 4, RENEW),), is_renew_ack=True))
        return answer, states(broker)

    answer, after = run(check, renew=False)  # share.renew.acknowledge.enable is false by default, as in Kafka
    part = partition(answer)
    assert part.error_code == ErrorCode.invalid_record_state
    assert "share.renew.acknowledge.enable" in part.error_message
    assert after == dict.fromkeys(range(5), "Acquired")


@pytest.mark.parametrize("api", ["ShareFetch", "ShareAcknowledge"])
def test_renew_before_version_2_is_invalid_request(api):
    async def check(broker: DirectBroker, _clock: ManualClock) -> tuple[int, str]:
        await broker.call(share_fetch(1, broker, 1, max_records=5))
        if api == "ShareFetch":
            part = partition(await broker.call(share_fetch(1, broker, 2, ((0, 0, RENEW),))))
            return part.acknowledge_error_code, part.acknowledge_error_message
        part = partition(await broker.call(share_ack(1, broker, 2, ((0, 0, RENEW),))))
        return part.error_code, part.error_message

    code, message = run(check)
    assert code == ErrorCode.invalid_request and "version 2" in message


@pytest.mark.parametrize("asks", [{"max_records": 1}, {"max_bytes": 1}, {"min_bytes": 1},
                                  {"max_wait": datetime.timedelta(milliseconds=5)}])
def test_a_renew_only_share_fetch_that_asks_for_records_is_invalid_request(asks):
    async def check(broker: DirectBroker, _clock: ManualClock) -> tuple[Any, Any]:
        await broker.call(share_fetch(2, broker, 1, max_records=5))
        request = share_fetch(2, broker, 2, ((0, 0, RENEW),), max_records=0, max_bytes=0, is_renew_ack=True)
        refused = await broker.call(dataclasses.replace(request, **asks))
        again = await broker.call(share_fetch(2, broker, 2, ((0, 0, RENEW),), max_records=0, max_bytes=0,
                                              is_renew_ack=True))
        return refused, again

    refused, again = run(check)
    assert refused.error_code == ErrorCode.invalid_request and "IsRenewAck" in refused.error_message
    assert refused.responses == ()
    assert again.error_code == ErrorCode.none, "the refused request did not move the session epoch on"


def test_an_unknown_share_acquire_mode_is_invalid_request():
    async def check(broker: DirectBroker, _clock: ManualClock) -> Any:
        return await broker.call(share_fetch(2, broker, 1, share_acquire_mode=2))

    answer = run(check)
    assert answer.error_code == ErrorCode.invalid_request and "ShareAcquireMode 2" in answer.error_message


def test_share_acknowledge_v1_has_no_lock_duration():
    async def check(broker: DirectBroker, _clock: ManualClock) -> Any:
        await broker.call(share_fetch(1, broker, 1, max_records=5))
        return await broker.call(share_ack(1, broker, 2, ((0, 4, ACCEPT),)))

    answer = run(check)
    assert type(answer) is codec.response_class(SHARE_ACK, 1)
    assert partition(answer).error_code == ErrorCode.none and not hasattr(answer, "acquisition_lock_timeout")
