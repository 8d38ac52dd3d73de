"""``minikafka metadata-quorum --bootstrap-controller``: DescribeQuorum sent straight to three
controller processes, printed in the layouts of Kafka's ``kafka-metadata-quorum.sh``
``describe --status`` and ``--replication`` (KIP-595, KIP-919); DescribeCluster at a controller."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minikafka.errors import ErrorCode
from minikafka.protocol import codec

from .quorum import CLUSTER_ID, REPO, Quorum, wait_until


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    q = Quorum(tmp_path_factory.mktemp("quorum")).start()
    leader, _ = wait_until("one leader every controller agrees on", lambda: q.leader(), timeout=15)
    wait_until("every voter caught up", lambda: q.caught_up(leader))
    yield q
    q.stop()


def tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "minikafka", "metadata-quorum", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def test_status_through_a_follower_names_the_leader(quorum):
    leader, epoch = quorum.leader()
    follower = next(n for n in quorum.ports if n != leader)  # it answers NOT_LEADER_OR_FOLLOWER: the tool asks on
    done = tool("--bootstrap-controller", f"127.0.0.1:{quorum.ports[follower]}", "describe", "--status")
    assert done.returncode == 0, done.stderr
    fields = {k: v.strip() for k, v in (line.split(":", 1) for line in done.stdout.splitlines())}
    assert list(fields) == [
        "ClusterId",
        "LeaderId",
        "LeaderEpoch",
        "HighWatermark",
        "MaxFollowerLag",
        "MaxFollowerLagTimeMs",
        "CurrentVoters",
        "CurrentObservers",
    ]
    assert fields["ClusterId"] == CLUSTER_ID
    assert (int(fields["LeaderId"]), int(fields["LeaderEpoch"])) == (leader, epoch)
    assert int(fields["HighWatermark"]) == quorum.describe(leader).high_watermark
    voters = json.loads(fields["CurrentVoters"])
    assert [(v["id"], v["endpoints"]) for v in voters] == [
        (n, [f"CONTROLLER://127.0.0.1:{port}"]) for n, port in sorted(quorum.ports.items())
    ]
    assert json.loads(fields["CurrentObservers"]) == []


def test_replication_lists_every_voter(quorum):
    leader, _ = quorum.leader()
    every = ",".join(f"127.0.0.1:{p}" for p in quorum.ports.values())
    done = tool("--bootstrap-controller", every, "describe", "--replication")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == [
        "NodeId",
        "DirectoryId",
        "LogEndOffset",
        "Lag",
        "LastFetchTimestamp",
        "LastCaughtUpTimestamp",
        "Status",
    ]
    roles = {int(r.split()[0]): r.split()[-1] for r in rows}
    assert roles == {n: "Leader" if n == leader else "Follower" for n in quorum.ports}
    assert all(int(r.split()[3]) == 0 for r in rows)  # caught up: no lag


def test_a_controller_answers_describe_cluster_for_controllers_only(quorum):
    leader, _ = quorum.leader()
    ask = lambda kind: codec.make(  # noqa: E731
        codec.request_class(60, 1), include_cluster_authorized_operations=False, endpoint_type=kind
    )
    with quorum.client(leader) as c:
        controllers, brokers = c.request(ask(2)), c.request(ask(1))
    assert controllers.error_code == ErrorCode.none and controllers.cluster_id == CLUSTER_ID
    assert controllers.controller_id == leader
    assert sorted((b.broker_id, b.port) for b in controllers.brokers) == sorted(quorum.ports.items())
    assert brokers.error_code == ErrorCode.mismatched_endpoint_type


def test_no_controller_there_is_a_sentence():
    done = tool("--bootstrap-controller", "127.0.0.1:1", "describe", "--status")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Cannot reach a controller at 127.0.0.1:1" in done.stderr
