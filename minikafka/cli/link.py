"""``minikafka link``: run a network of fault proxies, or change one that runs.

    minikafka link serve --node b1=127.0.0.1:19092 --node b2=19093 --client client --control 19999
    minikafka link --control 127.0.0.1:19999 partition b1 b2
    minikafka link --control 127.0.0.1:19999 delay client b1 200 20
    minikafka link --control 127.0.0.1:19999 heal

``serve`` prints one JSON line (``control`` port and ``routes``: for each node, the
address to use for each peer) and runs until interrupted. Any other words are one
command of the control protocol (see :mod:`minikafka.netfault`), sent to ``--control``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading

from ..netfault.control import USAGE, send
from ..netfault.network import Network


def _serve(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="minikafka link serve", description="run one proxy per ordered pair of nodes")
    parser.add_argument(
        "--node", action="append", default=[], metavar="NAME=[HOST:]PORT", help="a node and its real address"
    )
    parser.add_argument("--client", action="append", default=[], metavar="NAME", help="a node that only connects")
    parser.add_argument("--control", type=int, default=0, help="control port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--seed", type=int, default=None, help="seed for jitter and dropped connections")
    args = parser.parse_args(argv)
    nodes = {}
    for spec in args.node:
        name, sep, address = spec.partition("=")
        if not sep or not name or not address:
            parser.error(f"a node is NAME=[HOST:]PORT, not {spec!r}")
        nodes[name] = address
    if len(nodes) + len(args.client) < 2:
        parser.error("a network needs at least two nodes (or a node and a client)")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Network(nodes, clients=args.client, seed=args.seed) as net:
        port = net.serve_control(args.control)
        print(json.dumps({"control": f"127.0.0.1:{port}", "routes": net.routes()}), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        return _serve(argv[1:])
    parser = argparse.ArgumentParser(prog="minikafka link", description=__doc__.split("\n\n")[0], epilog=USAGE)
    parser.add_argument("--control", required=True, metavar="HOST:PORT", help="the control port of a running network")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="one control command")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give a command: " + USAGE)
    try:
        answer = send(args.control, " ".join(args.command))
    except OSError as e:
        print(f"minikafka link: cannot reach the control port {args.control}: {e}", file=sys.stderr)
        return 1
    print(answer)
    return 0 if answer.startswith("ok") else 1
