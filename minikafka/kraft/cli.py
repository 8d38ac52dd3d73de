"""``minikafka controller``: run one KRaft controller of a quorum, as its own process.

    python -m minikafka controller --node-id 1 --listen 127.0.0.1:9093 \\
        --voters 1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095 --log-dir /tmp/c1

Start one per voter; they elect a leader among themselves (KIP-595). Ask any of them with
DescribeQuorum (``kafka-metadata-quorum.sh --bootstrap-controller``). SIGTERM or Ctrl-C stops
it; a leader hands over with EndQuorumEpoch first.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from .config import BadVoters, QuorumConfig, parse_voters
from .process import ControllerProcess, ControllerSettings


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="minikafka controller", description=__doc__.split("\n\n")[0])
    p.add_argument("--node-id", type=int, required=True, help="node.id of this controller")
    p.add_argument("--listen", required=True, help="host:port of its CONTROLLER listener")
    p.add_argument("--voters", required=True, help="controller.quorum.voters: id@host:port,...")
    p.add_argument("--log-dir", required=True, help="metadata.log.dir: the metadata log and quorum-state")
    p.add_argument("--cluster-id", default="minikafka-kraft", help="cluster.id (the same on every controller)")
    p.add_argument("--election-timeout-ms", type=int, default=1000, help="controller.quorum.election.timeout.ms")
    p.add_argument("--fetch-timeout-ms", type=int, default=2000, help="controller.quorum.fetch.timeout.ms")
    p.add_argument(
        "--election-backoff-max-ms", type=int, default=1000, help="controller.quorum.election.backoff.max.ms"
    )
    p.add_argument("--request-timeout-ms", type=int, default=2000, help="controller.quorum.request.timeout.ms")
    p.add_argument("--broker-session-timeout-ms", type=int, default=9000, help="broker.session.timeout.ms")
    p.add_argument(
        "--metadata-log-max-record-bytes-between-snapshots",
        type=int,
        default=20 * 1024 * 1024,
        help="metadata.log.max.record.bytes.between.snapshots: snapshot after this many bytes of records",
    )
    p.add_argument("--log-level", default="INFO")
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> ControllerSettings:
    voters = parse_voters(args.voters)
    host, _, port = args.listen.rpartition(":")
    if args.node_id not in voters:
        raise BadVoters(f"node {args.node_id} is not in controller.quorum.voters ({args.voters})")
    if voters[args.node_id][1] != int(port):
        raise BadVoters(f"--listen port {port} is not node {args.node_id}'s port in controller.quorum.voters")
    quorum = QuorumConfig(
        args.election_timeout_ms, args.fetch_timeout_ms, args.election_backoff_max_ms, args.request_timeout_ms
    )
    return ControllerSettings(
        args.node_id,
        host,
        int(port),
        voters,
        Path(args.log_dir),
        args.cluster_id,
        quorum,
        args.broker_session_timeout_ms,
        args.metadata_log_max_record_bytes_between_snapshots,
    )


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = settings_from(args)
    except (BadVoters, ValueError) as e:
        print(f"minikafka controller: {e}", file=sys.stderr)
        return 2
    asyncio.run(ControllerProcess(settings).run())
    return 0
