"""Snapshots of the metadata (KIP-630): the log is cut below them, a lagging controller fetches one."""

from __future__ import annotations

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft import snapshots
from minikafka.kraft.metadata_log import PARTITION_DIR, MetadataLog
from minikafka.kraft.records import REGISTER_BROKER

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
