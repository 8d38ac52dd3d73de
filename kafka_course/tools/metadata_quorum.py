"""``minikafka metadata-quorum``: the KRaft controller quorum (kafka-metadata-quorum.sh).

The same subcommand and flags as Kafka's script, against any Kafka cluster::

    minikafka metadata-quorum --bootstrap-server B describe --status
    minikafka metadata-quorum --bootstrap-server B describe --replication [--human-readable]
    minikafka metadata-quorum --bootstrap-controller C describe --status

``--bootstrap-controller`` asks a controller itself, with no broker in between
(``controller_quorum``), as Kafka's script does since KIP-919.

``--status``: the cluster id, the quorum leader (the active controller) and its epoch, the
metadata log's high watermark, how far the slowest voter lags, and the voters and
observers. ``--replication``: one line per voter and observer with its log end offset,
lag and when it last fetched and caught up.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from .cluster_admin import CliError, add_bootstrap, connect, run
from .controller_quorum import describe as describe_at_controller

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka metadata-quorum",
                                description="Describe the KRaft metadata quorum, like kafka-metadata-quorum.sh.")
    add_bootstrap(p)
    p.add_argument("--bootstrap-controller", metavar="HOST:PORT",
                   help="controller(s) to ask directly, instead of a broker (KIP-919)")
    sub = p.add_subparsers(dest="command", required=True, metavar="describe")
    describe = sub.add_parser("describe", help="describe the metadata quorum")
    what = describe.add_mutually_exclusive_group(required=True)
    what.add_argument("--status", action="store_true", help="the leader, epoch, high watermark, voters, observers")
    what.add_argument("--replication", action="store_true", help="each voter's and observer's replication state")
    describe.add_argument("--human-readable", action="store_true", help="with --replication: times as 'N ms ago'")
    return p


def _quorum(admin: KafkaAdminClient) -> tuple[dict, dict]:
    answer = admin.describe_metadata_quorum()
    partition = answer["topics"][0]["partitions"][0]
    if partition.get("error"):
        raise CliError(f"The quorum could not be described: {partition['error']}")
    return partition, {n["node_id"]: n for n in answer.get("nodes", [])}


def _through_broker(bootstrap: str, want_cluster_id: bool) -> tuple[dict, dict, str]:
    admin = connect(bootstrap)
    try:
        q, nodes = _quorum(admin)
        return q, nodes, admin.describe_cluster()["cluster_id"] if want_cluster_id else ""
    finally:
        admin.close()


def _endpoints(node: dict | None) -> list[str]:
    return [f"{e['name']}://{e['host']}:{e['port']}" for e in (node or {}).get("listeners", [])]


def status(q: dict, nodes: dict, cluster_id: str) -> None:
    voters, leader = q["current_voters"], q["leader_id"]
    leader_state = next((v for v in voters if v["replica_id"] == leader), None)
    slowest = min(voters, key=lambda v: v["log_end_offset"], default=None)
    lag = (leader_state["log_end_offset"] - slowest["log_end_offset"]) if leader_state and slowest else 0
    lag_ms = 0 if slowest is leader_state or not (leader_state and slowest) else \
        leader_state["last_caught_up_timestamp"] - slowest["last_caught_up_timestamp"]
    rows = [("ClusterId", cluster_id), ("LeaderId", leader),
            ("LeaderEpoch", q["leader_epoch"]), ("HighWatermark", q["high_watermark"]),
            ("MaxFollowerLag", lag), ("MaxFollowerLagTimeMs", lag_ms),
            ("CurrentVoters", _members(voters, nodes)), ("CurrentObservers", _members(q["observers"], nodes))]
    for label, value in rows:
        print(f"{label + ':':<24}{value}")


def _members(states: list[dict], nodes: dict) -> str:
    out = []
    for s in states:
        member = {"id": s["replica_id"], "directoryId": str(s["replica_directory_id"])}
        if _endpoints(nodes.get(s["replica_id"])):
            member["endpoints"] = _endpoints(nodes.get(s["replica_id"]))
        out.append(member)
    return json.dumps(out, separators=(", ", ": "))


def replication(q: dict, human: bool) -> None:
    now = int(time.time() * 1000)
    rows: list[tuple[object, ...]] = [("NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                                       "LastCaughtUpTimestamp", "Status")]
    for kind, states in (("Voter", q["current_voters"]), ("Observer", q["observers"])):
        for s in states:
            role = "Leader" if s["replica_id"] == q["leader_id"] else "Follower" if kind == "Voter" else "Observer"
            rows.append((s["replica_id"], s["replica_directory_id"], s["log_end_offset"],
                         max(0, q["high_watermark"] - s["log_end_offset"]),
                         _when(s["last_fetch_timestamp"], now, human), _when(s["last_caught_up_timestamp"], now, human),
                         role))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(f"{v!s:<{w}}" for v, w in zip(r, widths)).rstrip())


def _when(timestamp: int, now: int, human: bool) -> int | str:
    if not human or timestamp < 0:
        return timestamp
    return f"{max(0, now - timestamp)} ms ago"


def main(argv: list[str]) -> int:
    def body(args: argparse.Namespace) -> int:
        if args.bootstrap_controller:
            q, nodes, cluster_id = describe_at_controller(args.bootstrap_controller)
        else:
            q, nodes, cluster_id = _through_broker(args.bootstrap_server, args.status)
        status(q, nodes, cluster_id) if args.status else replication(q, args.human_readable)
        return 0
    return run(build_parser(), argv, body)
