"""One controller process answering requests it must refuse or cannot serve, and its command line."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from minikafka.errors import ErrorCode
from minikafka.kraft import wire
from minikafka.kraft.messages import FetchRequest, VoteRequest
from minikafka.protocol import codec

from .quorum import CLUSTER_ID, REPO, Quorum, wait_until


@pytest.fixture
def single(tmp_path):
    q = Quorum(tmp_path, size=1).start()  # a quorum of one elects itself at its first election timeout
    wait_until("the lone controller leads", lambda: q.leader())
    yield q
    q.stop()


def test_api_versions_lists_the_quorum_apis(single):
    with single.client(1) as c:
        answer = c.request(
            codec.make(codec.request_class(18, 3), client_software_name="t", client_software_version="1")
        )
    ranges = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    assert ranges[52] == (0, 0) and ranges[55] == (0, 2) and ranges[62][0] == 0 and ranges[1] == (13, 17)


def test_a_request_for_another_cluster_gets_inconsistent_cluster_id(single):
    with single.client(1) as c:
        answer = c.request(wire.to_wire(VoteRequest(9, 99, 99, 99), "another-cluster"))
    assert answer.error_code == ErrorCode.inconsistent_cluster_id
    assert single.describe(1).leader_epoch < 99  # the vote changed nothing


def test_a_fetch_for_another_topic_is_an_invalid_request(single):
    request = wire.to_wire(FetchRequest(9, 1, 0, -1), CLUSTER_ID)
    topic = request.topics[0]
    other = codec.make(
        type(request),
        **{
            **{f: getattr(request, f) for f in codec.known_fields(type(request)) if hasattr(request, f)},
            "topics": (codec.make(type(topic), topic_id=uuid.uuid4(), partitions=topic.partitions),),
        },
    )
    with single.client(1) as c:
        assert c.request(other).error_code == ErrorCode.invalid_request


def test_an_observer_fetches_the_log_and_is_reported_as_one(single):
    _, epoch = single.leader()
    with single.client(1) as c:
        answer = wire.read_answer(wire.FETCH, c.request(wire.to_wire(FetchRequest(100, epoch, 0, -1), CLUSTER_ID)))
    assert answer.error == ErrorCode.none and answer.records and answer.high_watermark == 1
    observers = single.describe(1).observers
    assert [(o.replica_id, o.log_end_offset) for o in observers] == [(100, 0)]


def test_fetch_snapshot_finds_no_snapshot(single):
    _, epoch = single.leader()
    module = codec.request_module(59, 1)
    request = codec.make(
        codec.request_class(59, 1),
        cluster_id=CLUSTER_ID,
        replica_id=2,
        max_bytes=1 << 20,
        topics=(
            codec.entity(
                module,
                "TopicSnapshot",
                name="__cluster_metadata",
                partitions=(
                    codec.entity(
                        module,
                        "PartitionSnapshot",
                        partition=0,
                        current_leader_epoch=epoch,
                        position=0,
                        snapshot_id=codec.entity(module, "SnapshotId", end_offset=1, epoch=epoch),
                    ),
                ),
            ),
        ),
    )
    with single.client(1) as c:
        answer = c.request(request)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.snapshot_not_found


def test_the_command_line_names_a_bad_voters_list():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minikafka",
            "controller",
            "--node-id",
            "4",
            "--listen",
            "127.0.0.1:1",
            "--voters",
            "1@127.0.0.1:1",
            "--log-dir",
            "/nonexistent",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2
    assert "node 4 is not in controller.quorum.voters" in done.stderr


def test_dump_log_reads_the_metadata_segment(single):
    segment = single.log_dir(1) / "__cluster_metadata-0" / "00000000000000000000.log"
    done = subprocess.run(
        [sys.executable, "-m", "minikafka", "dump-log", "--print-data-log", str(segment)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    _, epoch = single.leader()
    assert f"partitionLeaderEpoch: {epoch} isTransactional: false isControl: true" in done.stdout
