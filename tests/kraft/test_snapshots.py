"""Snapshots of the metadata (KIP-630): the log is cut below them, a lagging controller fetches one."""

from __future__ import annotations

import uuid
from dataclasses import asdict

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft import snapshots
from minikafka.kraft.config import QuorumConfig
from minikafka.kraft.quorum_controller import QuorumController
from minikafka.kraft.quorum_state import QuorumStateStore
from minikafka.kraft.raft import RaftNode
from minikafka.kraft.metadata_log import PARTITION_DIR, MetadataLog
from minikafka.kraft.records import REGISTER_BROKER, TOPIC_RECORD

from .quorum import Quorum, wait_until


@pytest.fixture
def quorum(tmp_path):
    # metadata.log.max.record.bytes.between.snapshots=1: every commit is followed by a snapshot
    q = Quorum(tmp_path, extra=("--metadata-log-max-record-bytes-between-snapshots", "1")).start()
    yield q
    q.stop()


def snapshot_brokers(quorum: Quorum, node: int) -> tuple[int, list[int]] | None:
    """(end offset, registered broker ids) of a controller's newest snapshot."""
    directory = quorum.log_dir(node) / PARTITION_DIR
    latest = snapshots.latest(directory) if directory.exists() else None
    data = snapshots.read(directory, *latest) if latest else None
    if latest is None or data is None:
        return None
    return latest[0], sorted(r.data["brokerId"] for r in snapshots.records_of(data) if r.type == REGISTER_BROKER)


def test_a_controller_behind_the_log_start_loads_the_leaders_snapshot(quorum):
    leader, _ = wait_until("a leader", lambda: quorum.leader())
    wait_until("everyone caught up", lambda: quorum.caught_up(leader))
    behind = next(n for n in quorum.ports if n != leader)
    quorum.terminate(behind)
    epochs = {b: quorum.register(leader, broker_id=b).broker_epoch for b in (31, 32)}
    assert all(e > 0 for e in epochs.values())
    end, _ = wait_until(
        "the leader's snapshot holds both brokers",
        lambda: (s := snapshot_brokers(quorum, leader)) and s[1] == [31, 32] and s,
    )
    log_start = MetadataLog(quorum.log_dir(leader), read_only=True).start_offset
    assert log_start == end and log_start > MetadataLog(quorum.log_dir(behind), read_only=True).end_offset
    quorum.start(behind)
    wait_until(
        "the restarted controller has the snapshot",
        lambda: (s := snapshot_brokers(quorum, behind)) and s[1] == [31, 32],
    )
    wait_until("and is caught up", lambda: quorum.caught_up(leader))
    quorum.kill(leader)  # whoever leads next rebuilt the registrations from a snapshot, not the log
    new_leader, _ = wait_until("a new leader", lambda: quorum.leader(quorum.alive()), timeout=10)
    assert quorum.heartbeat(new_leader, 31, epochs[31]).error_code == ErrorCode.none
    assert quorum.heartbeat(new_leader, 32, epochs[32] + 1).error_code == ErrorCode.stale_broker_epoch


def test_snapshots_carry_the_topics_and_a_restarted_controller_loads_them(quorum):
    from .test_quorum_topics import create_topics

    leader, _ = wait_until("a leader", lambda: quorum.leader())
    epoch = quorum.register(leader, broker_id=5).broker_epoch
    wait_until("broker 5 unfenced", lambda: not quorum.heartbeat(leader, 5, epoch, epoch).is_fenced)
    assert create_topics(quorum, leader, "kept", 2, 1).error_code == ErrorCode.none

    def snapshot_topics(node: int) -> list[str]:
        directory = quorum.log_dir(node) / PARTITION_DIR
        latest = snapshots.latest(directory) if directory.exists() else None
        data = snapshots.read(directory, *latest) if latest else None
        return [r.data["topic"]["name"] for r in snapshots.records_of(data or b"") if r.type == TOPIC_RECORD]

    for n in quorum.ports:
        wait_until(f"controller {n} snapshotted the topic", lambda n=n: snapshot_topics(n) == ["kept"])
    quorum.kill(leader)
    quorum.start(leader)  # restarts from its snapshot; the log before it is gone
    new_leader, _ = wait_until("a leader", lambda: quorum.leader(), timeout=30)
    again = wait_until(
        "the leader serves CreateTopics",
        lambda: (a := create_topics(quorum, new_leader, "kept", 1, 1)).error_code != ErrorCode.not_controller and a,
    )
    assert again.error_code == ErrorCode.topic_already_exists


def test_a_controller_restarts_from_a_snapshot_that_holds_the_metadata(tmp_path):
    def controller(now: int) -> QuorumController:
        log = MetadataLog(tmp_path)
        node = RaftNode(1, {1}, log, QuorumStateStore(tmp_path / PARTITION_DIR, (1,)), QuorumConfig(), now)
        return QuorumController(node, snapshot_bytes=1, now=now)

    first, now = controller(0), 0
    while not first.is_ready:
        now += 100
        first.tick(now)
    listeners = [{"name": "PLAINTEXT", "host": "127.0.0.1", "port": 9092, "securityProtocol": 0}]
    _, epoch = first.register(4, uuid.uuid4(), listeners, None, now)
    first.heartbeat(4, epoch, epoch, False, False, now)
    first.create_topic("kept", 2, 1, {"retention.ms": "1000"})
    first.allocate_producer_ids(4, epoch)
    first.tick(now + 1)
    expected = {n: asdict(t) for n, t in first.metadata.topics.items()}
    first.node.log.close()
    again = controller(now + 2)
    assert again.node.log.start_offset > 0 and snapshots.latest(tmp_path / PARTITION_DIR) is not None
    assert {n: asdict(t) for n, t in again.metadata.topics.items()} == expected
    assert again.metadata.producer_id_block_end == first.metadata.producer_id_block_end
    assert again.metadata.brokers == {4: ("127.0.0.1", 9092)}
