"""Replication over the network (issue 31): followers send Fetch requests to their leaders.

The first tests run a cluster with each transport (``replicated_cluster``) and real clients;
the others send a follower's Fetch by hand over a socket (kio), to check what the leader's
Fetch handler answers a broker: records past the high watermark, CurrentLeaderEpoch,
DivergingEpoch, and a refusal for a broker that holds no replica.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer
from kio.schema.fetch.v12.request import FetchPartition as FetchPartitionV12
from kio.schema.fetch.v12.request import FetchRequest as FetchRequestV12
from kio.schema.fetch.v12.request import FetchTopic as FetchTopicV12
from kio.schema.fetch.v18.request import FetchPartition, FetchRequest, FetchTopic, ReplicaState
from kio.static.primitive import i32Timedelta

from minikafka import Cluster
from minikafka.errors import ErrorCode
from minikafka.replica.sources import NetworkSource
from tests.rawclient import RawClient
from tests.replication.helpers import wait_for


def test_acks_all_with_kafka_python_reaches_every_replica(replicated_cluster):
    cluster = replicated_cluster(brokers=3, config={"min.insync.replicas": 2})
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    futures = [producer.send("orders", f"order-{i}".encode(), partition=i % 2) for i in range(200)]
    producer.flush(30)
    assert all(f.get(10).offset >= 0 for f in futures)  # every write acknowledged by the whole ISR
    producer.close()
    for p in (0, 1):
        state = cluster.partition_state("orders", p)
        assert state["high_watermark"] == 100
        assert state["log_end_offsets"] == {1: 100, 2: 100, 3: 100}
        assert sorted(state["isr"]) == [1, 2, 3]
    consumer = KafkaConsumer("orders", bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000, enable_auto_commit=False)
    got = sorted(m.value for m in consumer)
    consumer.close()
    assert got == sorted(f"order-{i}".encode() for i in range(200))
    if replicated_cluster.transport == "network":  # the followers really used their connections
        for b in (1, 2, 3):
            source = cluster.broker(b).fetcher.source
            assert isinstance(source, NetworkSource) and source._channels


def test_followers_high_watermark_follows_the_leaders(replicated_cluster):
    cluster = replicated_cluster(brokers=2)
    cluster.create_topic("hw", partitions=1, replication_factor=2)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(30):
        p.produce("hw", b"%d" % i)
    assert p.flush(30) == 0
    state = cluster.partition_state("hw")
    follower = next(b for b in state["replicas"] if b != state["leader"])
    copy = cluster.broker(follower).local_replica("hw", 0)
    assert wait_for(lambda: copy.high_watermark == 30)  # learnt from the leader's next fetch answer


# -- the leader's Fetch handler, as a follower broker calls it ------------------------------------
def _cluster_with_records(make_cluster, count: int = 5):
    cluster = make_cluster(brokers=2)
    cluster.create_topic("log", partitions=1, replication_factor=2)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for i in range(count):
        p.produce("log", b"r%d" % i)
    assert p.flush(30) == 0
    state = cluster.partition_state("log")
    return cluster, state["leader"], next(b for b in state["replicas"] if b != state["leader"])


def _follower_fetch(cluster, leader: int, replica_id: int, offset: int, *, epoch: int = -1,
                    last_fetched_epoch: int = -1):
    topic_id = uuid.UUID(cluster.metadata.topics["log"].topic_id)
    request = FetchRequest(
        replica_state=ReplicaState(replica_id=replica_id), max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=1, topics=(FetchTopic(topic_id=topic_id, partitions=(FetchPartition(
            partition=0, current_leader_epoch=epoch, fetch_offset=offset, last_fetched_epoch=last_fetched_epoch,
            partition_max_bytes=1 << 20),)),), forgotten_topics_data=())
    with RawClient(f"127.0.0.1:{cluster.ports[leader]}") as raw:
        response = raw.request(request)
    return response.responses[0].partitions[0]


def test_a_follower_fetch_reads_past_the_high_watermark_and_reports_it(make_cluster):
    cluster, leader, follower = _cluster_with_records(make_cluster)
    cluster.slow_broker(follower, 60_000)  # the real follower stops fetching: the high watermark stays
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "1"})
    for i in range(3):
        p.produce("log", b"more-%d" % i)
    assert p.flush(30) == 0
    assert cluster.partition_state("log")["high_watermark"] == 5
    data = _follower_fetch(cluster, leader, follower, 5)
    assert data.error_code == ErrorCode.none
    assert data.high_watermark == 5 and data.log_start_offset == 0 and data.records  # records past it
    data = _follower_fetch(cluster, leader, follower, 8)  # the follower says it has everything
    assert data.error_code == ErrorCode.none and data.high_watermark == 8


def test_a_follower_fetch_with_a_stale_or_future_leader_epoch_is_refused(make_cluster):
    cluster, leader, follower = _cluster_with_records(make_cluster)
    epoch = cluster.partition_state("log")["leader_epoch"]
    assert _follower_fetch(cluster, leader, follower, 5, epoch=epoch + 1).error_code == ErrorCode.unknown_leader_epoch
    cluster.stop_broker(leader)
    cluster.start_broker(leader)  # the preferred leader takes the partition back, in a newer epoch
    assert wait_for(lambda: cluster.partition_state("log")["leader"] == leader
                    and cluster.partition_state("log")["leader_epoch"] > epoch)
    assert _follower_fetch(cluster, leader, follower, 5, epoch=epoch).error_code == ErrorCode.fenced_leader_epoch
    current = cluster.partition_state("log")["leader_epoch"]
    assert _follower_fetch(cluster, leader, follower, 5, epoch=current).error_code == ErrorCode.none
    # the broker that no longer leads answers NOT_LEADER_OR_FOLLOWER
    assert _follower_fetch(cluster, follower, leader, 0, epoch=current).error_code == ErrorCode.not_leader_or_follower


def test_a_follower_whose_log_diverged_is_told_where_to_cut(make_cluster):
    cluster, leader, follower = _cluster_with_records(make_cluster)
    epoch = cluster.partition_state("log")["leader_epoch"]
    # the follower claims records past the leader's end in the leader's epoch: cut at the leader's end
    data = _follower_fetch(cluster, leader, follower, 9, last_fetched_epoch=epoch)
    assert (data.diverging_epoch.epoch, data.diverging_epoch.end_offset) == (epoch, 5) and not data.records
    # an epoch the leader never had: the largest it had before it, and where that one ended
    data = _follower_fetch(cluster, leader, follower, 5, last_fetched_epoch=epoch + 3)
    assert (data.diverging_epoch.epoch, data.diverging_epoch.end_offset) == (epoch, 5)
    # a log that agrees gets records, no divergence
    data = _follower_fetch(cluster, leader, follower, 2, last_fetched_epoch=epoch)
    assert data.diverging_epoch.epoch == -1 and data.records


def test_a_broker_without_a_replica_may_not_fetch_as_a_follower(make_cluster):
    cluster, leader, _ = _cluster_with_records(make_cluster)
    assert _follower_fetch(cluster, leader, 99, 0).error_code == ErrorCode.not_leader_or_follower
    request = FetchRequestV12(replica_id=99, max_wait=i32Timedelta.parse(datetime.timedelta(0)), min_bytes=1,
                              topics=(FetchTopicV12(topic="log", partitions=(FetchPartitionV12(
                                  partition=0, fetch_offset=0, partition_max_bytes=1 << 20),)),),
                              forgotten_topics_data=())
    with RawClient(f"127.0.0.1:{cluster.ports[leader]}") as raw:  # v12: the replica id in its own field
        data = raw.request(request).responses[0].partitions[0]
    assert data.error_code == ErrorCode.not_leader_or_follower
    assert cluster.partition_state("log")["log_end_offsets"].get(99) is None


def test_offset_for_leader_epoch_answers_where_an_epoch_ended(make_cluster):
    from kio.schema.offset_for_leader_epoch.v4.request import (
        OffsetForLeaderEpochRequest,
        OffsetForLeaderPartition,
        OffsetForLeaderTopic,
    )

    cluster, leader, follower = _cluster_with_records(make_cluster)
    epoch = cluster.partition_state("log")["leader_epoch"]

    def ask(broker: int, leader_epoch: int, current: int = -1, replica_id: int = -1):
        request = OffsetForLeaderEpochRequest(replica_id=replica_id, topics=(OffsetForLeaderTopic(
            topic="log", partitions=(OffsetForLeaderPartition(partition=0, current_leader_epoch=current,
                                                              leader_epoch=leader_epoch),)),))
        with RawClient(f"127.0.0.1:{cluster.ports[broker]}") as raw:
            got = raw.request(request).topics[0].partitions[0]
        return got.error_code, got.leader_epoch, got.end_offset

    assert ask(leader, epoch) == (ErrorCode.none, epoch, 5)  # the current epoch ends at the log end
    assert ask(leader, epoch + 7, replica_id=follower) == (ErrorCode.none, epoch, 5)  # one it never had
    assert ask(leader, epoch, current=epoch + 1)[0] == ErrorCode.unknown_leader_epoch
    assert ask(follower, epoch)[0] == ErrorCode.not_leader_or_follower


def test_an_unknown_replication_transport_is_refused():
    with pytest.raises(ValueError, match="replication is one of in-process, network, not 'pigeon'"):
        Cluster(brokers=2, in_memory=True, replication="pigeon")
