"""The ``minikafka`` command: the broker's own tools, plus any registered client tools.

``serve``, ``dump-log``, ``controller``, ``broker``, ``link`` and ``node`` belong to the broker. Other packages add
subcommands through the ``minikafka.commands`` entry-point group (name -> ``module:main``); the course
package registers its Kafka-shaped client tools there (``topics``, ``console-producer``,
``console-consumer``, ``consumer-groups``, ``fakeusers``). The broker package never
imports them: it only finds what is installed.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from importlib.metadata import entry_points

GROUP = "minikafka.commands"
BUILT_IN = {
    "serve": ("minikafka.cli.serve:main", "run a broker (or a cluster of brokers) on this machine"),
    "dump-log": ("minikafka.cli.dump_log:main", "print the batches and records of segment files (kafka-dump-log.sh)"),
    "controller": ("minikafka.kraft.cli:main", "run one KRaft controller of a quorum, as its own process (KIP-595)"),
    "broker": ("minikafka.brokerproc.cli:main", "run one broker as its own process, beside a controller quorum"),
    "link": ("minikafka.cli.link:main", "run fault proxies between nodes, or cut, delay and heal their links"),
    "node": ("minikafka.cli.node:main", "kill, stop, pause, resume or start one process of a running process cluster"),
}


def commands() -> dict[str, str]:
    """Command name -> ``module:function``, the broker's own first."""
    found = {name: target for name, (target, _) in BUILT_IN.items()}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def _load(target: str) -> Callable[[list[str]], int | None]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr or "main")


def _summary(name: str, target: str) -> str:
    if name in BUILT_IN:
        return BUILT_IN[name][1]
    try:
        doc = importlib.import_module(target.partition(":")[0]).__doc__ or ""
    except ImportError:
        return "(not importable here)"
    first = " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph, on one line
    if first.startswith("``") and ": " in first:
        first = first.split(": ", 1)[1]  # "``minikafka topics``: what it does" -> what it does
    return first.split(". ")[0].rstrip(".")


def usage() -> str:
    found = commands()
    width = max(map(len, found))
    lines = ["usage: minikafka COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {_summary(name, target)}" for name, target in found.items()]
    lines += ["", "Run 'minikafka COMMAND --help' for the options of one command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    found = BUILT_IN.get(name, (None,))[0] or commands().get(name)
    if found is None:
        print(f"minikafka: unknown command {name!r}. Commands: {', '.join(commands())}.", file=sys.stderr)
        return 2
    try:
        command = _load(found)
    except ImportError as e:
        print(f"minikafka {name}: not available ({e}); install the course: pip install -e '.[course]'",
              file=sys.stderr)
        return 2
    try:
        return command(rest) or 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``minikafka dump-log ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        return 141  # 128 + SIGPIPE, as a shell reports a command its pipe's reader closed


if __name__ == "__main__":
    sys.exit(main())
