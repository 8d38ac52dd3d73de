"""The replica's rules as plain logic: no socket, no event loop, no broker.

ISR shrink and expand (``replica.lag.time.max.ms``), the min.insync.replicas check of
acks=all, idempotent-producer de-duplication and epoch fencing (KIP-98), the leader
epoch cache (KIP-101) and the follower's divergence point.
"""

from __future__ import annotations

import pytest

from minikafka import records
from minikafka.config import BrokerConfig, TopicConfig
from minikafka.errors import ErrorCode, KafkaError
from minikafka.log import PartitionLog
from minikafka.metadata import PartitionInfo
from minikafka.replica.epochs import LeaderEpochCache
from minikafka.replica.fetcher import divergence_point
from minikafka.replica.isr import isr_changes
from minikafka.replica.partition import FollowerState, Partition
from minikafka.replica.producer_state import Duplicate, ProducerStateTable

LAG_MS = 10_000


def replica(node_id: int = 1, leader: int = 1, isr=(1, 2, 3), **config) -> Partition:
    info = PartitionInfo(0, [1, 2, 3], leader, list(isr))
    topic_config = TopicConfig(BrokerConfig(), config)
    return Partition("t", info, PartitionLog(None, topic_config, topic="t"), topic_config, node_id)


def write(part: Partition, n: int, **batch) -> None:
    part.append_batches([records.build_batch([records.Record(i, 1, None, b"v") for i in range(n)], **batch)])


# -- the ISR ---------------------------------------------------------------------------------
def test_a_follower_that_has_not_caught_up_for_the_lag_limit_leaves_the_isr():
    leader = replica()
    write(leader, 5)
    now = 100_000
    leader.followers = {2: FollowerState(5, last_caught_up_ms=now, last_fetch_ms=now),
                        3: FollowerState(2, last_caught_up_ms=now - LAG_MS - 1, last_fetch_ms=now)}
    assert isr_changes(leader, LAG_MS, now) == ([3], [])


def test_a_follower_behind_but_within_the_lag_limit_stays():
    leader = replica()
    write(leader, 5)
    now = 100_000
    leader.followers = {2: FollowerState(5, now, now), 3: FollowerState(2, now - LAG_MS + 1, now)}
    assert isr_changes(leader, LAG_MS, now) == ([], [])


def test_a_caught_up_follower_that_fetched_recently_rejoins_but_a_silent_one_does_not():
    leader = replica(isr=(1,))
    write(leader, 5)
    now = 100_000
    leader.followers = {2: FollowerState(5, now, now - 100), 3: FollowerState(5, now, now - LAG_MS - 1)}
    assert isr_changes(leader, LAG_MS, now) == ([], [2])


def test_acks_all_is_refused_when_the_isr_is_below_min_insync_replicas():
    replica(isr=(1, 2), **{"min.insync.replicas": 2}).check_min_insync()  # enough
    with pytest.raises(KafkaError) as refused:
        replica(isr=(1,), **{"min.insync.replicas": 2}).check_min_insync()
    assert refused.value.code == ErrorCode.not_enough_replicas


def test_the_high_watermark_is_the_smallest_log_end_offset_in_the_isr():
    leader = replica(isr=(1, 2))
    write(leader, 10)
    leader.followers = {2: FollowerState(4), 3: FollowerState(0)}  # 3 is out of the ISR: it does not count
    leader.update_high_watermark()
    assert leader.high_watermark == 4


# -- idempotent producers (KIP-98) -------------------------------------------------------------
def header(pid: int, epoch: int, seq: int, count: int = 1, **kw) -> records.BatchHeader:
    batch = records.build_batch([records.Record(i, 1, None, b"v") for i in range(count)], producer_id=pid,
                                producer_epoch=epoch, base_sequence=seq, **kw)
    return records.BatchHeader.parse(batch)


def test_a_retried_batch_is_a_duplicate_and_a_gap_is_out_of_order():
    table = ProducerStateTable()
    table.record(header(7, 0, 0, 3))
    assert table.check(header(7, 0, 0, 3)) == Duplicate(0)
    assert table.check(header(7, 0, 3)) is None
    with pytest.raises(KafkaError) as gap:
        table.check(header(7, 0, 5))
    assert gap.value.code == ErrorCode.out_of_order_sequence_number


def test_a_marker_with_a_newer_epoch_fences_the_old_producer():
    table = ProducerStateTable()
    table.record(header(7, 0, 0, transactional=True))
    assert 7 in table.open_transactions()
    marker = records.build_batch([records.Record(0, 1, records.control_record_key(records.CONTROL_ABORT), b"\0" * 6)],
                                 producer_id=7, producer_epoch=1, transactional=True, control=True)
    table.record(records.BatchHeader.parse(marker))
    assert 7 not in table.open_transactions()
    with pytest.raises(KafkaError) as fenced:
        table.check(header(7, 0, 1, transactional=True))
    assert fenced.value.code == ErrorCode.invalid_producer_epoch


# -- leader epochs and divergence (KIP-101, KIP-279) -----------------------------------------------
def test_the_epoch_cache_says_where_each_epoch_ended():
    cache = LeaderEpochCache()
    for epoch, start in ((0, 0), (2, 10), (3, 15)):
        cache.assign(epoch, start)
    cache.assign(1, 12)  # older than the latest: ignored
    assert cache.end_offset_for(0, 20) == (0, 10)
    assert cache.end_offset_for(1, 20) == (0, 10)  # unknown epoch: the largest one below it
    assert cache.end_offset_for(3, 20) == (3, 20)


def test_a_follower_cuts_its_log_where_it_diverged_from_the_new_leader():
    old_leader, new_leader = replica(node_id=2, leader=2), replica(node_id=1, leader=2)
    for part in (old_leader, new_leader):
        write(part, 5)  # epoch 0, offsets 0-4, on both
    write(old_leader, 3)  # offsets 5-7 only the old leader got
    new_leader.info.leader, new_leader.info.leader_epoch = 1, 1
    write(new_leader, 2)  # epoch 1 starts at 5 on the new leader
    old_leader.info.leader = 1
    assert divergence_point(old_leader, new_leader) == 5


def test_a_follower_with_an_epoch_the_leader_never_saw_cuts_where_its_copy_of_the_older_epoch_ends():
    """KIP-279: broker 2 led epoch 1 from offset 5 while broker 1, which led epoch 0 to offset 8,
    never saw epoch 1. Broker 1 leads epoch 2; broker 2's offsets 5-7 (epoch 1) are not broker 1's
    5-7 (epoch 0), so broker 2 cuts at 5, not where the leader's epoch 0 ended (8)."""
    follower, leader = replica(node_id=2, leader=1), replica(node_id=1, leader=1)
    for part in (follower, leader):
        write(part, 5)  # epoch 0, offsets 0-4, on both
    write(leader, 3)  # epoch 0, offsets 5-7, only broker 1 got them
    follower.info.leader, follower.info.leader_epoch = 2, 1
    write(follower, 4)  # epoch 1, offsets 5-8, written by broker 2 alone
    leader.info.leader, leader.info.leader_epoch = 1, 2
    write(leader, 2)  # epoch 2 starts at 8 on broker 1
    follower.info.leader = 1
    assert divergence_point(follower, leader) == 5
