"""The ``minikafka`` command: a broker, and tools shaped like Kafka's own scripts.

Each subcommand lives in its own module with ``main(argv) -> int`` and mirrors a
script the Kafka documentation uses (``kafka-topics.sh`` -> ``minikafka topics``...).
The tools speak the Kafka protocol, so they work against any cluster, not only
minikafka.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "serve": ("minikafka.cli.serve", "run a broker (or a cluster of brokers) on this machine"),
    "topics": ("minikafka.cli.topics", "create, list, describe, alter and delete topics (kafka-topics.sh)"),
    "console-producer": ("minikafka.cli.console_producer", "send lines from stdin as records"),
    "console-consumer": ("minikafka.cli.console_consumer", "print records of a topic"),
    "consumer-groups": ("minikafka.cli.consumer_groups", "list, describe, reset and delete consumer groups"),
    "dump-log": ("minikafka.cli.dump_log", "print the batches and records of segment files (kafka-dump-log.sh)"),
    "fakeusers": ("minikafka.cli.fakeusers", "produce fake sign-up events with Faker"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: minikafka COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {doc}" for name, (_, doc) in COMMANDS.items()]
    lines += ["", "Run 'minikafka COMMAND --help' for the options of one command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"minikafka: unknown command {name!r}. Commands: {', '.join(COMMANDS)}.", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(COMMANDS[name][0])
    except ImportError as e:
        print(f"minikafka {name}: not available ({e}); install the course extras: pip install -e '.[course]'",
              file=sys.stderr)
        return 2
    try:
        return module.main(rest) or 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
