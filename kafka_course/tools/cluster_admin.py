"""What the cluster-operation tools share: an admin client, Kafka's JSON files, sentences.

``reassign-partitions``, ``leader-election``, ``log-dirs`` and ``metadata-quorum`` need
admin APIs that confluent-kafka's AdminClient does not offer (AlterPartitionReassignments,
DescribeLogDirs, DescribeQuorum...), so they use kafka-python's KafkaAdminClient, which
speaks them to any Kafka cluster. ``--command-config`` (a login, as Kafka's scripts take it)
is read once for every tool (``common``) and given here in kafka-python's names. A problem
is raised as ``CliError`` and printed as one sentence a person can act on, never as a
traceback (``run``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minikafka.api import ErrorCode, explain

from .common import add_bootstrap, client_settings

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

__all__ = ["CliError", "add_bootstrap", "connect", "error_text", "partitions_of", "read_json", "run"]

CONNECT_TIMEOUT_MS = 5000
REQUEST_TIMEOUT_MS = 15000


class CliError(Exception):
    """A problem the user can act on; printed as one sentence, exit status 1."""


# --command-config's settings (librdkafka's names, see client_config) in kafka-python's names.
_KAFKA_PYTHON = {"security.protocol": "security_protocol", "sasl.mechanisms": "sasl_mechanism",
                 "sasl.username": "sasl_plain_username", "sasl.password": "sasl_plain_password",
                 "ssl.ca.location": "ssl_cafile", "ssl.certificate.location": "ssl_certfile",
                 "ssl.key.location": "ssl_keyfile", "ssl.key.password": "ssl_password"}


def login_settings(bootstrap: str) -> dict[str, Any]:
    """kafka-python's arguments for ``--command-config``'s login (and TLS trust)."""
    out: dict[str, Any] = {}
    for name, value in client_settings(bootstrap).items():
        if name in _KAFKA_PYTHON:
            out[_KAFKA_PYTHON[name]] = value
        elif name == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = value.lower() == "https"
    return out


class _ClientLog(logging.Handler):
    """kafka-python's own log lines, kept instead of printed: a problem is told once, as a
    sentence, and a refused login is told apart from an unreachable broker."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def connect(bootstrap: str) -> KafkaAdminClient:
    """A kafka-python admin client, or a sentence saying why there is none."""
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError
    client_log, kafka_log = _ClientLog(), logging.getLogger("kafka")
    kafka_log.addHandler(client_log)
    kafka_log.propagate = False
    try:
        return KafkaAdminClient(bootstrap_servers=bootstrap, bootstrap_timeout_ms=CONNECT_TIMEOUT_MS,
                                request_timeout_ms=REQUEST_TIMEOUT_MS, client_id="minikafka-tools",
                                **login_settings(bootstrap))
    except KafkaError:
        refused = next((line for line in client_log.lines if "Authentication failed" in line), None)
        if refused is not None:
            reason = refused.rsplit("Authentication failed: ", 1)[-1].split(" (backoff")[0].rstrip(")")
            raise CliError(f"The broker at {bootstrap} refused the login ({reason}). "
                           "Check the username and password in --command-config.") from None
        raise CliError(f"Cannot reach a broker at {bootstrap}, or it closed the connection. Is one running at the "
                       "bootstrap address, and does it need a login (--command-config)?") from None


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


def partitions_of(admin: KafkaAdminClient, topics: list[str]) -> dict[str, list[dict]]:
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
        code = body(args) or 0
        sys.stdout.flush()  # here, so that a closed pipe is noticed inside this try
        return code
    except BrokenPipeError:  # the reader went away (`| head`, `| grep -q`): stop quietly, as Kafka's scripts do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except CliError as e:
        print(f"Error: {e}", file=sys.stderr)
    except KafkaError as e:
        print(f"Error: {error_text(e)} ({e})", file=sys.stderr)
    return 1
