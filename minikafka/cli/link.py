"""``minikafka link``: run a network of fault proxies, or change one that runs.

    minikafka link serve --node b1=127.0.0.1:19092 --node b2=19093 --client client --control 19999
    minikafka link --control 127.0.0.1:19999 partition b1 b2
    minikafka link --control 127.0.0.1:19999 delay client b1 200 20
    minikafka link --control 127.0.0.1:19999 heal
    minikafka link --data-dir .minikafka-data partition client b1    # serve --controllers N --links

``serve`` prints one JSON line (``control`` port and ``routes``: for each node, the
address to use for each peer) and runs until interrupted. Any other words are one
command of the control protocol (see :mod:`minikafka.netfault`), sent to ``--control``,
or to the control port a process cluster started with ``--links`` recorded in ``--data-dir``.
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
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--control", metavar="HOST:PORT", help="the control port of a running network")
    where.add_argument("--data-dir", metavar="DIR",
                       help="the data directory of a process cluster started with --links (its cluster.json names "
                            "the control port)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="one control command")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give a command: " + USAGE)
    control = args.control or _recorded_control(args.data_dir)
    if control is None:
        return 2
    try:
        answer = send(control, " ".join(args.command))
    except OSError as e:
        still = " Is the cluster still running?" if args.data_dir else ""
        print(f"minikafka link: cannot reach the control port {control} ({e}).{still}", file=sys.stderr)
        return 1
    print(answer)
    return 0 if answer.startswith("ok") else 1


def _recorded_control(data_dir: str) -> str | None:
    """The control port ``serve --controllers N --links`` recorded, or None after saying why there is none."""
    from ..running import RunningProcesses  # the wire codec it brings is not needed with --control

    try:
        control = RunningProcesses(data_dir).control
    except FileNotFoundError as e:
        print(f"minikafka link: {e}", file=sys.stderr)
        return None
    if control is None:
        print(f"minikafka link: the process cluster in {data_dir} runs without links; start it with "
              "minikafka serve --controllers N --links to cut, delay or drop its traffic.", file=sys.stderr)
    return control
