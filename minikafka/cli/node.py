"""``minikafka node``: crash, stop, pause, resume or start one process of a running process cluster.

    minikafka node status --data-dir .minikafka-data      # every node: pid, running/paused/stopped, port
    minikafka node pause b1 --data-dir .minikafka-data    # SIGSTOP: alive, silent (a long GC pause)
    minikafka node resume b1
    minikafka node kill c4                                # SIGKILL: no controlled shutdown
    minikafka node stop 2                                 # SIGTERM: a controlled shutdown
    minikafka node start c4                               # the recorded command again (same ports, same data)

The cluster is the one ``minikafka serve --brokers B --controllers N`` runs with its data in
``--data-dir`` (the default is serve's, ``.minikafka-data``); it is found through the
``cluster.json`` it keeps there (:mod:`minikafka.running`). A node is named as the links name it
(``b1``, ``c4``) or by its id.
"""

from __future__ import annotations

import argparse
import sys

from ..running import RunningProcesses

ACTIONS = {
    "kill": ("SIGKILL: no controlled shutdown, no flush", RunningProcesses.kill, "killed"),
    "stop": ("SIGTERM: a broker shuts down under control, a leading controller hands over",
             RunningProcesses.terminate, "stopped"),
    "pause": ("SIGSTOP: alive but silent, until resume", RunningProcesses.pause, "paused"),
    "resume": ("SIGCONT: a paused node goes on", RunningProcesses.resume, "resumed"),
    "start": ("the node's recorded command again, same ports and data", RunningProcesses.start_node, "started"),
}


def build_parser() -> argparse.ArgumentParser:
    summary = __doc__.split("\n\n")[0].split(": ", 1)[1]
    parser = argparse.ArgumentParser(prog="minikafka node", description=summary[0].upper() + summary[1:],
                                     epilog="; ".join(f"{a}: {what}" for a, (what, _, _) in ACTIONS.items()))
    parser.add_argument("action", choices=[*ACTIONS, "status"])
    parser.add_argument("node", nargs="?", help="b1, c4... or a node id (not for status)")
    parser.add_argument("--data-dir", default=".minikafka-data", help="the process cluster's data directory")
    return parser


def status_table(rows: list[dict]) -> str:
    lines = [f"{'node':<6}{'id':>4}  {'role':<11}{'pid':>8}  {'state':<9}{'listen':<22}"]
    for row in rows:
        active = {True: "active", False: "", None: ""}[row.get("active")]
        lines.append(f"{row['name']:<6}{row['id']:>4}  {row['role']:<11}{row['pid']:>8}  {row['state']:<9}"
                     f"{row['listen']:<22}{active}".rstrip())
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        nodes = RunningProcesses(args.data_dir)
        if args.action == "status":
            print(status_table(nodes.status()))
            return 0
        if args.node is None:
            print(f"Error: name the node to {args.action}: b1, c4... or its id.", file=sys.stderr)
            return 2
        node_id = nodes.node_id(args.node)
    except (FileNotFoundError, ValueError) as e:
        print(f"Error: {str(e).rstrip('.')}{'' if str(e).endswith('?') else '.'}", file=sys.stderr)
        return 2
    name = nodes.names()[node_id]
    if args.action != "start" and not nodes.alive(node_id):
        print(f"Error: {name} is not running; 'minikafka node start {name}' starts it again.", file=sys.stderr)
        return 1
    _, act, done = ACTIONS[args.action]
    act(nodes, node_id)
    print(f"{name} {done} (pid {nodes.pids()[node_id]}).")
    return 0
