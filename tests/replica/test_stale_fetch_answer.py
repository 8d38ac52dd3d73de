"""A follower's fetch answer that comes back after the partition changed hands is dropped.

Broker 2 follows partition t-0 from broker 1 and has a Fetch out when the controller makes broker 2
the leader (epoch 1). The old leader's answer then says the log diverged at offset 3. Applied, it
would cut the new leader's own log (and its epoch cache), and its followers would spin against it
for ever: the network failover test stalled so under load. Kafka drops such an answer (the
partition's fetch state is gone); so does minikafka. No socket: a real Partition and a fake source."""

from __future__ import annotations

import asyncio

from minikafka import records
from minikafka.config import BrokerConfig, TopicConfig
from minikafka.errors import ErrorCode
from minikafka.log import PartitionLog
from minikafka.metadata import PartitionInfo
from minikafka.replica.fetcher import PartitionAnswer, PartitionFetch, ReplicaFetcher
from minikafka.replica.partition import Partition


class SlowLeader:
    """A FetchSource whose answer (a divergence at offset 3) arrives once ``release`` is set."""

    def __init__(self) -> None:
        self.asked, self.release = asyncio.Event(), asyncio.Event()

    async def fetch(self, follower_id: int, leader_id: int, wanted: list[PartitionFetch]) -> list[PartitionAnswer]:
        self.asked.set()
        await self.release.wait()
        return [PartitionAnswer(ErrorCode.none, diverging=(0, 3)) for _ in wanted]

    def close(self) -> None:
        pass


def test_an_answer_for_a_partition_this_broker_now_leads_is_not_applied():
    async def scenario() -> int:
        """The log end offset after the stale answer came back."""
        config = TopicConfig(BrokerConfig(), {})
        part = Partition("t", PartitionInfo(0, [1, 2], 1, [1, 2]), PartitionLog(None, config, topic="t"), config, 2)
        for _ in range(2):  # six records in epoch 0, as broker 2 copied them from broker 1
            batch = records.build_batch([records.Record(i, 1, None, b"v") for i in range(3)])
            part.append_replicated(batch if part.log_end_offset == 0 else
                                   records.with_base_offset(batch, part.log_end_offset))
        source = SlowLeader()
        fetcher = ReplicaFetcher(2, {("t", 0): part}, source, BrokerConfig())
        follow = asyncio.get_running_loop().create_task(fetcher._follow(1))
        await source.asked.wait()
        part.info.leader, part.info.leader_epoch = 2, 1  # the controller's news (its shared record)
        source.release.set()
        await asyncio.sleep(0.2)
        follow.cancel()
        return part.log_end_offset

    assert asyncio.run(scenario()) == 6  # nothing cut at 3: the stale answer was dropped
