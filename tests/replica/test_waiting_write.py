"""An acks=all write waiting for the ISR, as Kafka's delayed produce: it fails with
NOT_LEADER_OR_FOLLOWER when its replica stops leading, and a broker that stops cancels it.

Plain ``Partition`` objects on an event loop: no socket, no broker. The leadership change is
what the controller does (a new leader and a bumped leader epoch on the shared record).
"""

from __future__ import annotations

import asyncio
import datetime

import pytest

from minikafka import records
from minikafka.config import BrokerConfig, TopicConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.log import PartitionLog
from minikafka.metadata import PartitionInfo
from minikafka.replica.partition import Partition

TIMEOUT = datetime.timedelta(seconds=5)


def leader_with_lagging_follower() -> tuple[Partition, int]:
    """Leader 1, ISR {1, 2}; one idempotent batch appended that follower 2 has not fetched."""
    info = PartitionInfo(0, [1, 2], 1, [1, 2])
    config = TopicConfig(BrokerConfig(), {})
    part = Partition("t", info, PartitionLog(None, config, topic="t"), config, 1)
    batch = records.build_batch([records.Record(0, 1, None, b"v")], producer_id=7, producer_epoch=0, base_sequence=0)
    return part, part.append_produced(batch).last_offset + 1


def test_a_write_waiting_for_the_isr_fails_when_its_leader_is_replaced():
    async def scenario() -> KafkaError:
        part, end = leader_with_lagging_follower()
        waiting = asyncio.ensure_future(part.wait_for_replicas(end, TIMEOUT))
        await asyncio.sleep(0.01)
        assert not waiting.done()  # follower 2 has not copied it: the ack waits
        part.info.leader, part.info.leader_epoch = 2, part.info.leader_epoch + 1  # broker 2 leads now
        # As a follower, broker 1 learns broker 2's high watermark, which covers offset 0 whatever
        # broker 2 holds there: that must not acknowledge the write.
        part.set_high_watermark(end)
        part.notify()
        with pytest.raises(KafkaError) as failed:
            await waiting
        return failed.value

    error = asyncio.run(scenario())
    assert error.code == ErrorCode.not_leader_or_follower


def test_a_write_waiting_for_the_isr_is_cancelled_even_when_woken_at_the_same_time():
    async def scenario() -> None:
        part, end = leader_with_lagging_follower()
        waiting = asyncio.ensure_future(part.wait_for_replicas(end, TIMEOUT))
        await asyncio.sleep(0.01)
        part.notify()  # another append wakes the waiters...
        waiting.cancel()  # ...as the broker stops and cancels its connections
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 1.0)

    asyncio.run(scenario())
