"""``minikafka serve``: run brokers in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import sys

# kio registers Hypothesis strategies when Hypothesis is importable (test installs have
# it); a broker process never needs them, and skipping them halves its start-up time.
sys.modules.setdefault("hypothesis", None)

from ..cluster import Cluster  # noqa: E402
from ..config import ConfigError, read_properties  # noqa: E402
from .common import parse_pairs  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minikafka serve", description="Run a Kafka-compatible broker.")
    p.add_argument("properties", nargs="?", help="a server.properties file (Kafka's format)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="port of the first broker (default 9092; 0 = any free port)")
    p.add_argument("--brokers", type=int, default=1, help="number of brokers, on consecutive ports")
    p.add_argument("--data-dir", default=".minikafka-data", help="where logs are kept (default ./.minikafka-data)")
    p.add_argument("--in-memory", action="store_true", help="keep everything in RAM (lost on exit)")
    p.add_argument("--config", action="append", metavar="NAME=VALUE", help="a broker setting, e.g. num.partitions=3")
    p.add_argument("--log-level", default="INFO")
    return p


def _first_node_id(settings: dict) -> int:
    """``node.id`` (KRaft) or ``broker.id`` (ZooKeeper days) names the first broker; more
    brokers (--brokers) take the ids after it."""
    given = {k: settings.pop(k) for k in ("node.id", "broker.id") if k in settings}
    try:
        ids = {int(v) for v in given.values()}
    except ValueError:
        raise ConfigError(f"node.id must be a whole number, not {given}") from None
    if len(ids) > 1:
        raise ConfigError(f"node.id and broker.id disagree: {given}")
    return ids.pop() if ids else 1


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = read_properties(args.properties) if args.properties else {}
    settings.update(parse_pairs(args.config, "--config"))
    try:
        first_id = _first_node_id(settings)
        cluster = Cluster(args.brokers, None if args.in_memory else args.data_dir, args.port, settings,
                          host=args.host, in_memory=args.in_memory, first_node_id=first_id)
        cluster.start()
    except (ConfigError, ValueError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"Error: cannot listen on {args.host}:{args.port} ({e.strerror}). "
              f"Is another broker running? Try --port 0 or another port.", file=sys.stderr)
        return 2
    where = "in memory" if args.in_memory else f"data in {args.data_dir}"
    ids = ", ".join(map(str, cluster.node_ids))
    print(f"minikafka: {args.brokers} broker(s) (id {ids}) listening on {cluster.bootstrap_servers} ({where}). "
          "Ctrl-C stops.",
          flush=True)
    cluster.serve_forever()
    return 0
