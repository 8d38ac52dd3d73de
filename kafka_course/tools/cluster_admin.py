"""What the cluster-operation tools share: an admin client, Kafka's JSON files, sentences.

``reassign-partitions``, ``leader-election``, ``log-dirs`` and ``metadata-quorum`` need
admin APIs that confluent-kafka's AdminClient does not offer (AlterPartitionReassignments,
DescribeLogDirs, DescribeQuorum...), so they use kafka-python's KafkaAdminClient, which
speaks them to any Kafka cluster. A problem is raised as ``CliError`` and printed as one
sentence a person can act on, never as a traceback (``run``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from minikafka.errors import ErrorCode, explain

from .common import add_bootstrap

__all__ = ["CliError", "add_bootstrap", "connect", "error_text", "partitions_of", "read_json", "run"]

CONNECT_TIMEOUT_MS = 5000
REQUEST_TIMEOUT_MS = 15000


class CliError(Exception):
    """A problem the user can act on; printed as one sentence, exit status 1."""


def connect(bootstrap: str):
    """A kafka-python admin client, or a sentence saying why there is none."""
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError
    try:
        return KafkaAdminClient(bootstrap_servers=bootstrap, bootstrap_timeout_ms=CONNECT_TIMEOUT_MS,
                                request_timeout_ms=REQUEST_TIMEOUT_MS, client_id="minikafka-tools")
    except KafkaError:
        raise CliError(f"Cannot reach a broker at {bootstrap}. Is one running at the bootstrap address?") from None


def error_text(error: Any) -> str:
    """A Kafka error (kafka-python class or instance, or a code) as its name and the sentence for people."""
    errno = getattr(error, "errno", error)
    if not isinstance(errno, int):
        return str(error)
    try:
        label = ErrorCode(errno).name.upper()
    except ValueError:
        label = f"error {errno}"
    return f"{label}: {explain(errno)}"


def read_json(path: str, what: str) -> Any:
    """The JSON document in ``path``; CliError naming the file and the problem otherwise."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        raise CliError(f"Cannot read the {what} {path}: {e.strerror}.") from None
    except ValueError as e:
        raise CliError(f"The {what} {path} is not valid JSON ({e}).") from None


def partitions_of(admin, topics: list[str]) -> dict[str, list[dict]]:
    """Each topic's partitions (index, leader, replicas, ISR) from the cluster; CliError for a missing one."""
    out = {}
    for t in admin.describe_topics(topics):
        if t["error_code"]:
            raise CliError(f"Topic {t['name']!r}: {explain(t['error_code'])}")
        out[t["name"]] = sorted(t["partitions"], key=lambda p: p["partition_index"])
    return out


def run(parser: argparse.ArgumentParser, argv: list[str], body: Callable[[argparse.Namespace], int | None]) -> int:
    """Parse ``argv`` and run ``body``; every expected failure becomes one line on stderr."""
    from kafka.errors import KafkaError
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed the problem
        return int(e.code or 0)
    try:
        return body(args) or 0
    except CliError as e:
        print(f"Error: {e}", file=sys.stderr)
    except KafkaError as e:
        print(f"Error: {error_text(e)} ({e})", file=sys.stderr)
    return 1
