"""``minikafka broker``: run one broker as its own process, beside a KRaft controller quorum.

    python -m minikafka broker --node-id 1 --listen 127.0.0.1:9092 \\
        --controllers 1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095 --log-dir /tmp/b1

It registers with the active controller, heartbeats, follows the metadata log and serves
clients on ``--listen``. SIGTERM or Ctrl-C shuts it down under control (the controller
agrees first), leaving the clean-shutdown marker in its log directory.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import logging
import signal
import sys
from pathlib import Path

from ..cli.common import parse_pairs
from ..config import ConfigError
from ..security import settings as security_settings
from ..kraft.config import BadVoters, parse_voters
from .process import HEARTBEAT_INTERVAL_MS, BrokerProcess, BrokerSettings


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="minikafka broker", description=__doc__.split("\n\n")[0])
    p.add_argument("--node-id", type=int, required=True, help="node.id of this broker")
    p.add_argument("--listen", required=True, help="host:port of its PLAINTEXT listener (port 0: any free one)")
    p.add_argument("--controllers", required=True,
                   help="the controllers, id@host:port,... (controller.quorum.voters)")
    p.add_argument("--advertise", metavar="HOST:PORT", help="advertised.listeners: the address clients are told "
                                                            "(default: where it listens)")
    p.add_argument("--peer", action="append", metavar="ID=HOST:PORT",
                   help="where to reach another broker for replication and transactions (Kafka's inter-broker "
                        "listener); repeat per broker (default: the address it registered for clients)")
    p.add_argument("--log-dir", required=True, help="log.dirs: where its partitions are kept")
    p.add_argument("--cluster-id", default="minikafka-kraft", help="cluster.id (the controllers' own)")
    p.add_argument("--config", action="append", metavar="NAME=VALUE", help="a broker setting, e.g. num.partitions=3")
    p.add_argument("--log-level", default="INFO")
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> BrokerSettings:
    host, colon, port = args.listen.rpartition(":")
    if not colon or not port.isdigit():
        raise ValueError(f"--listen must be host:port, not {args.listen!r}")
    config = parse_pairs(args.config, "--config")
    security_settings.refuse_on_processes(config)
    heartbeat = int(config.pop("broker.heartbeat.interval.ms", HEARTBEAT_INTERVAL_MS))
    advertised = None
    if args.advertise:
        a_host, a_colon, a_port = args.advertise.rpartition(":")
        if not a_colon or not a_port.isdigit():
            raise ValueError(f"--advertise must be host:port, not {args.advertise!r}")
        advertised = (a_host or "127.0.0.1", int(a_port))
    return BrokerSettings(args.node_id, host or "127.0.0.1", int(port), parse_voters(args.controllers),
                          Path(args.log_dir), args.cluster_id, config, heartbeat, advertised=advertised,
                          peers=parse_peers(args.peer or []))


def parse_peers(items: list[str]) -> dict[int, tuple[str, int]]:
    """``["2=127.0.0.1:9101"]`` -> ``{2: ("127.0.0.1", 9101)}`` (raises ValueError with a sentence)."""
    peers = {}
    for item in items:
        node, _, address = item.partition("=")
        host, colon, port = address.rpartition(":")
        if not node.strip().isdigit() or not colon or not port.isdigit():
            raise ValueError(f"--peer must be id=host:port (say 2=127.0.0.1:9101), not {item!r}")
        peers[int(node)] = (host or "127.0.0.1", int(port))
    return peers


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    faulthandler.register(signal.SIGUSR1)  # a stuck broker prints where it is (ProcessCluster asks before a kill)
    try:
        settings = settings_from(args)
        process = BrokerProcess(settings)
    except (BadVoters, ConfigError, ValueError) as e:
        print(f"minikafka broker: {e}", file=sys.stderr)
        return 2
    try:
        asyncio.run(process.run())
    except OSError as e:
        print(f"minikafka broker: cannot listen on {args.listen} ({e.strerror})", file=sys.stderr)
        return 2
    return 0
