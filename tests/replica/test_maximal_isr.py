"""The leader's maximal ISR (KIP-497): a follower the leader asked the controller to add counts
for the high watermark from the moment it is asked, not from the moment the answer comes back.

The controller may commit the expansion and, at once, elect the newcomer leader (a preferred
replica election); a leader that kept acknowledging acks=all writes with the old, smaller ISR
until the AlterPartition answer arrived has acknowledged records the new leader does not hold,
and the followers truncate them away. The process fault run (bench/faults_processes.py) lost
1010 acknowledged records that way. No socket: a real Broker (``minikafka.assembly``), a Partition,
and an ISR channel that writes while the AlterPartition is in flight."""

from __future__ import annotations

import asyncio

from minikafka import records
from minikafka.assembly import Assembly
from minikafka.clock import now_ms
from minikafka.config import BrokerConfig, TopicConfig
from minikafka.log import PartitionLog
from minikafka.metadata import PartitionInfo
from minikafka.replica.partition import FollowerState, Partition

LAG_MS = 10_000


def write(part: Partition, n: int) -> None:
    part.append_batches([records.build_batch([records.Record(i, 1, None, b"v") for i in range(n)])])


class SlowController:
    """An ISR channel whose AlterPartition answer arrives after the leader wrote 5 more records
    and follower 3 (already in the ISR) fetched them."""

    def __init__(self, leader: Partition) -> None:
        self.leader, self.high_watermark_in_flight = leader, -1
        self.asked: list[list[int]] = []

    async def alter_partition(self, topic: str, index: int, leader_epoch: int, new_isr: list[int]) -> PartitionInfo:
        self.asked.append(new_isr)
        write(self.leader, 5)
        self.leader.followers[3].log_end_offset = self.leader.log_end_offset
        self.leader.update_high_watermark()
        self.high_watermark_in_flight = self.leader.high_watermark
        self.leader.info.isr = new_isr  # what the controller committed (and it may elect broker 2 now)
        return self.leader.info


def test_a_follower_being_added_to_the_isr_holds_the_high_watermark_before_the_controller_answers():
    broker = Assembly().add_broker(1)
    config = TopicConfig(BrokerConfig(), {})
    leader = Partition("t", PartitionInfo(0, [1, 2, 3], 1, [1, 3]), PartitionLog(None, config, topic="t"), config, 1)
    write(leader, 5)
    now = 10**13
    leader.followers = {2: FollowerState(5, now, now), 3: FollowerState(5, now, now)}  # 2 caught up: it rejoins
    leader.update_high_watermark()
    assert leader.high_watermark == 5
    channel = SlowController(leader)
    broker.isr_channel = channel
    broker.partitions[("t", 0)] = leader
    asyncio.run(broker.check_isr(LAG_MS))
    assert channel.asked == [[1, 2, 3]]
    # broker 2 has 5 records: the 5 written meanwhile are not acknowledged until it fetches them
    assert channel.high_watermark_in_flight == 5
    assert leader.pending_isr == set()
    leader.followers[2].log_end_offset = 10
    leader.update_high_watermark()
    assert leader.high_watermark == 10


def test_a_restarted_follower_whose_log_diverges_is_not_put_back_in_the_isr_on_what_the_leader_knew_before():
    """KIP-903's case: the leader still holds the follower's state from before it was killed
    (caught up, fetched a moment ago); the restarted follower's first fetch is answered with a
    diverging epoch, and that must not leave it looking caught up."""
    from minikafka.replica.fetcher import serve_follower
    from minikafka.replica.isr import isr_changes

    config = TopicConfig(BrokerConfig(), {})
    info = PartitionInfo(0, [1, 2, 3], 1, [1, 3])
    leader = Partition("t", info, PartitionLog(None, config, topic="t"), config, 1)
    write(leader, 5)  # epoch 0: offsets 0-4
    info.leader_epoch = 1
    write(leader, 5)  # epoch 1: offsets 5-9
    now = now_ms()
    leader.followers = {2: FollowerState(10, now, now), 3: FollowerState(10, now, now)}  # 2 before its crash
    # broker 2 restarted with epoch-0 records up to offset 8 that the leader never had
    read = serve_follower(leader, 2, current_leader_epoch=1, fetch_offset=8, last_fetched_epoch=0, max_bytes=1 << 20)
    assert read.diverging == (0, 5)
    assert isr_changes(leader, LAG_MS, now) == ([], [])
    assert leader.followers[2].log_end_offset == 5


class LostAnswer:
    """An ISR channel whose controller commits the expansion and then dies (or the link breaks)
    before the answer reaches the leader, whose metadata has not caught up yet."""

    def __init__(self) -> None:
        self.asked: list[list[int]] = []

    async def alter_partition(self, topic: str, index: int, leader_epoch: int, new_isr: list[int]) -> PartitionInfo:
        self.asked.append(new_isr)
        raise OSError("the active controller closed the connection")


def test_a_follower_whose_isr_request_lost_its_answer_counts_until_the_metadata_says_what_was_committed():
    broker = Assembly().add_broker(1)
    config = TopicConfig(BrokerConfig(), {})
    info = PartitionInfo(0, [1, 2, 3], 1, [1, 3], partition_epoch=4)
    leader = Partition("t", info, PartitionLog(None, config, topic="t"), config, 1)
    write(leader, 5)
    now = 10**13
    leader.followers = {2: FollowerState(5, now, now), 3: FollowerState(5, now, now)}
    broker.isr_channel = channel = LostAnswer()
    broker.partitions[("t", 0)] = leader
    asyncio.run(broker.check_isr(LAG_MS))
    assert channel.asked == [[1, 2, 3]]
    # the controller may have put broker 2 in the ISR (and may elect it): writes broker 3 alone
    # copied are not acknowledged
    write(leader, 5)
    leader.followers[3].log_end_offset = 10
    leader.update_high_watermark()
    assert leader.high_watermark == 5
    # the metadata log brings the committed state (partition epoch 5, broker 2 in the ISR)
    info.isr, info.partition_epoch = [1, 2, 3], 5
    leader.update_high_watermark()
    assert leader.pending_isr == set() and leader.high_watermark == 5
    leader.followers[2].log_end_offset = 10
    leader.update_high_watermark()
    assert leader.high_watermark == 10


def test_a_refused_expansion_stops_counting_the_follower_and_the_high_watermark_moves_on():
    from minikafka.errors import ErrorCode, KafkaError

    class Refuses:
        async def alter_partition(self, topic: str, index: int, leader_epoch: int,
                                  new_isr: list[int]) -> PartitionInfo:
            raise KafkaError(ErrorCode.ineligible_replica, "Broker(s) [2] are fenced or not registered.")

    broker = Assembly().add_broker(1)
    config = TopicConfig(BrokerConfig(), {})
    leader = Partition("t", PartitionInfo(0, [1, 2, 3], 1, [1, 3], partition_epoch=4),
                       PartitionLog(None, config, topic="t"), config, 1)
    write(leader, 5)
    now = 10**13
    leader.followers = {2: FollowerState(5, now, now), 3: FollowerState(5, now, now)}
    broker.isr_channel = Refuses()
    broker.partitions[("t", 0)] = leader
    asyncio.run(broker.check_isr(LAG_MS))
    assert leader.pending_isr == set()
    write(leader, 5)
    leader.followers[3].log_end_offset = 10
    leader.update_high_watermark()
    assert leader.high_watermark == 10


def test_an_accepted_expansion_that_moved_the_leadership_is_not_taken_as_this_leaders_isr():
    """The controller adds the returning preferred replica and, in the same breath, makes it leader
    at a new epoch. The old leader's AlterPartition answer names the new leader: taking it as "my
    ISR changed" (and forgetting the follower it asked for) let it acknowledge writes only one
    follower held until the metadata made it a follower; the new leader lacked them, and the run
    of bench/faults_processes.py saw its producers fail with OUT_OF_ORDER_SEQUENCE_NUMBER."""
    from minikafka.brokerproc.remote import QuorumIsrChannel
    from minikafka.metadata import ClusterMetadata, TopicInfo
    from minikafka.protocol import codec

    class Quorum:  # the active controller's answer, over no socket
        async def serves(self, api_key: int, version: int) -> bool:
            return version == 3

        async def call(self, request: object) -> object:
            module = codec.response_module(56, 3)
            moved = codec.entity(module, "PartitionData", partition_index=0, error_code=0, leader_id=2,
                                 leader_epoch=2, isr=(2, 1, 3), partition_epoch=6)
            return codec.make(codec.response_class(56, 3), error_code=0, topics=(
                codec.entity(module, "TopicData", topic_id=request.topics[0].topic_id,  # type: ignore[attr-defined]
                             partitions=(moved,)),))

    broker = Assembly().add_broker(1)
    config = TopicConfig(BrokerConfig(), {})
    info = PartitionInfo(0, [2, 1, 3], 1, [1, 3], leader_epoch=1, partition_epoch=5)
    metadata = ClusterMetadata(BrokerConfig({}))
    metadata.topics["t"] = TopicInfo("t", "7e57a8b1-0000-4000-8000-000000000001", [info])
    leader = Partition("t", info, PartitionLog(None, config, topic="t"), config, 1)
    write(leader, 5)
    now = 10**13
    leader.followers = {2: FollowerState(5, now, now), 3: FollowerState(5, now, now)}
    broker.isr_channel = QuorumIsrChannel(1, Quorum(), metadata, lambda: 7)  # type: ignore[arg-type]
    broker.partitions[("t", 0)] = leader
    asyncio.run(broker.check_isr(LAG_MS))
    assert info.isr == [1, 3] and leader.pending_isr == {2}
    write(leader, 5)  # broker 2 leads now and fetches no more: what only broker 3 copies is not acknowledged
    leader.followers[3].log_end_offset = 10
    leader.update_high_watermark()
    assert leader.high_watermark == 5
